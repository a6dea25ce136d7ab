//! The megakernel, with a few task kinds, compiles with NVRTC for sm_90.
//! Skips (with a printed reason) when NVRTC is absent; fails instead when
//! AUTARKY_REQUIRE_NVRTC=1.

use autarky::runtime::source;
use autarky::{Error, TaskKind};

fn kinds() -> Vec<TaskKind> {
    vec![
        TaskKind::new("noop", "__device__ void noop(autarky::TaskCtx&) {}"),
        TaskKind::new(
            "scale",
            r#"struct ScaleArgs { float* data; unsigned n; float factor; };
               __device__ void scale(autarky::TaskCtx& ctx) {
                   const ScaleArgs& a = ctx.args<ScaleArgs>();
                   for (unsigned i = threadIdx.x; i < a.n; i += blockDim.x) a.data[i] *= a.factor;
                   __syncthreads();
                   autarky::check_finite(ctx, a.data, a.n);
               }"#,
        )
        .arg_size_bytes(16),
        TaskKind::new(
            "waiter",
            r#"__device__ void waiter(autarky::TaskCtx& ctx) {
                   if (threadIdx.x == 0) {
                       const uint32_t* w = ctx.args<const uint32_t*>();
                       if (!ctx.wait_geq(w, 1, 7)) return;
                       ctx.fail(3);
                   }
               }"#,
        )
        .arg_size_bytes(8),
    ]
}

fn require() -> bool {
    std::env::var("AUTARKY_REQUIRE_NVRTC").as_deref() == Ok("1")
}

#[test]
fn megakernel_compiles_for_sm90() {
    for threads in [128, 256] {
        match source::compile(&kinds(), threads, 90) {
            Ok(cubin) => assert!(cubin.starts_with(b"\x7fELF"), "not an ELF cubin"),
            Err(Error::NvrtcNotFound { looked }) if !require() => {
                eprintln!(
                    "SKIP megakernel_compiles_for_sm90: NVRTC not found (looked in {looked:?})"
                );
                return;
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn broken_task_body_reports_the_nvrtc_log() {
    let bad = vec![TaskKind::new(
        "bad",
        "__device__ void bad(autarky::TaskCtx& ctx) { undeclared_thing(); }",
    )];
    match source::compile(&bad, 128, 90) {
        Err(Error::Nvrtc { log, options }) => {
            assert!(log.contains("undeclared_thing"), "log: {log}");
            assert!(options.iter().any(|o| o.contains("sm_90")), "{options:?}");
        }
        Err(Error::NvrtcNotFound { .. }) if !require() => eprintln!("SKIP: NVRTC not found"),
        other => panic!("expected Error::Nvrtc, got {:?}", other.map(|c| c.len())),
    }
}

#[test]
fn megakernel_compiles_with_trace_rings_and_only_then_carries_them() {
    let traced = source::Variant {
        trace: true,
        ..Default::default()
    };
    assert!(source::options_for(128, traced).contains(&"-DAUTARKY_TRACE".to_string()));
    assert!(!source::options(128).contains(&"-DAUTARKY_TRACE".to_string()));
    let (with, without) = match (
        source::compile_variant(&kinds(), 128, 90, traced),
        source::compile(&kinds(), 128, 90),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(Error::NvrtcNotFound { looked }), _) if !require() => {
            eprintln!("SKIP: NVRTC not found (looked in {looked:?})");
            return;
        }
        (a, b) => panic!(
            "traced: {:?}, untraced: {:?}",
            a.map(|c| c.len()),
            b.map(|c| c.len())
        ),
    };
    assert!(with.starts_with(b"\x7fELF"), "not an ELF cubin");
    // The per-block ring counter is a named shared variable: present in the
    // traced kernel, absent from the untraced one (no trace code at all).
    let has = |cubin: &[u8]| cubin.windows(10).any(|w| w == b"trace_head");
    assert!(has(&with), "the traced cubin has no trace_head symbol");
    assert!(
        !has(&without),
        "the untraced cubin carries trace code (trace_head)"
    );
}

#[test]
fn every_kernel_variant_compiles() {
    use source::{Lean, Variant};
    for lean in [
        Lean::default(),
        Lean {
            no_pinned: true,
            no_comm_work: true,
            no_remote: true,
            no_counted: true,
        },
        Lean {
            no_pinned: false,
            no_comm_work: false,
            no_remote: true,
            no_counted: false,
        },
    ] {
        for local_pes in [1, 4] {
            let v = Variant {
                local_pes,
                lean,
                ..Default::default()
            };
            match source::compile_variant(&kinds(), 128, 90, v) {
                Ok(c) => assert!(c.starts_with(b"\x7fELF"), "{v:?}: not an ELF cubin"),
                Err(Error::NvrtcNotFound { .. }) if !require() => {
                    eprintln!("SKIP: NVRTC not found");
                    return;
                }
                Err(e) => panic!("{v:?}: {e}"),
            }
        }
    }
}
