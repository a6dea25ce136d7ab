//! The megakernel, with a few task kinds, compiles with NVRTC for sm_90.
//! Without NVRTC every test is reported as ignored, with the reason; with
//! AUTARKY_REQUIRE_NVRTC=1 they fail instead (tests/common/trials.rs).

mod common;

use autarky::runtime::source;
use autarky::{Error, TaskKind};
use common::{nvrtc_trial, run_trials};

fn main() -> std::process::ExitCode {
    run_trials(vec![
        nvrtc_trial("megakernel_compiles_for_sm90", megakernel_compiles_for_sm90),
        nvrtc_trial(
            "broken_task_body_reports_the_nvrtc_log",
            broken_task_body_reports_the_nvrtc_log,
        ),
        nvrtc_trial(
            "megakernel_compiles_with_trace_rings_and_only_then_carries_them",
            megakernel_compiles_with_trace_rings_and_only_then_carries_them,
        ),
        nvrtc_trial(
            "every_kernel_variant_compiles",
            every_kernel_variant_compiles,
        ),
    ])
}

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

fn megakernel_compiles_for_sm90() {
    for threads in [128, 256] {
        match source::compile(&kinds(), threads, 90) {
            Ok(cubin) => assert!(cubin.starts_with(b"\x7fELF"), "not an ELF cubin"),
            Err(e) => panic!("{e}"),
        }
    }
}

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
        other => panic!("expected Error::Nvrtc, got {:?}", other.map(|c| c.len())),
    }
}

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

fn every_kernel_variant_compiles() {
    use source::{Lean, Variant};
    let compiles = |v: Variant| match source::compile_variant(&kinds(), 128, 90, v) {
        Ok(c) => assert!(c.starts_with(b"\x7fELF"), "{v:?}: not an ELF cubin"),
        Err(e) => panic!("{v:?}: {e}"),
    };
    for lean in [
        Lean::default(),
        Lean {
            no_pinned: true,
            no_comm_work: true,
            no_remote: true,
            no_counted: true,
            no_stop: true,
            no_solo: true,
            solo_wide: false,
            no_round: true,
            round_dep: false,
        },
        Lean {
            no_pinned: false,
            no_comm_work: false,
            no_remote: true,
            no_counted: false,
            no_stop: false,
            no_solo: false,
            solo_wide: false,
            no_round: false,
            round_dep: false,
        },
        // The round path's checked loop (a patch whose tasks wait for
        // earlier ones of the round).
        Lean {
            no_pinned: false,
            no_comm_work: false,
            no_remote: true,
            no_counted: true,
            no_stop: false,
            no_solo: false,
            solo_wide: false,
            no_round: false,
            round_dep: true,
        },
        // The solo path's eight-predecessor form (a 3D or temporally
        // blocked 2D tile's).
        Lean {
            no_pinned: false,
            no_comm_work: false,
            no_remote: false,
            no_counted: true,
            no_stop: false,
            no_solo: false,
            solo_wide: true,
            no_round: true,
            round_dep: false,
        },
        Lean {
            no_pinned: false,
            no_comm_work: false,
            no_remote: false,
            no_counted: false,
            no_stop: true,
            no_solo: true,
            solo_wide: false,
            no_round: false,
            round_dep: false,
        },
        // The fan-in shape: a join's inputs and the join in their loops.
        Lean {
            no_pinned: true,
            no_comm_work: true,
            no_remote: true,
            no_counted: false,
            no_stop: true,
            no_solo: true,
            solo_wide: false,
            no_round: true,
            round_dep: false,
        },
    ] {
        // Arrival slots (-DAUTARKY_SLOTS) only where something counts.
        let slot_modes: &[bool] = if lean.no_counted {
            &[false]
        } else {
            &[false, true]
        };
        for &slots in slot_modes {
            for local_pes in [1, 4] {
                let v = Variant {
                    local_pes,
                    lean,
                    slots,
                    ..Default::default()
                };
                compiles(v);
            }
        }
    }
    // Traced, without pinned lists, with counted tasks and comm work: the
    // compute loop's paths that only such kernels compile, with the trace
    // records.
    let v = Variant {
        trace: true,
        lean: Lean {
            no_pinned: true,
            no_comm_work: false,
            no_remote: true,
            no_counted: false,
            no_stop: true,
            no_solo: true,
            solo_wide: false,
            no_round: true,
            round_dep: false,
        },
        slots: true,
        ..Default::default()
    };
    compiles(v);
}
