//! Assembling the megakernel's source: the embedded device sources plus a
//! generated header with the graph's task bodies and the dispatch switch.
//!
//! The device sources are embedded with `include_str!` (cargo rebuilds the
//! crate when they change), so a binary needs no source tree at run time.

use std::fmt::Write;

use crate::graph::TaskKind;

/// Embedded device headers, by include name.
pub const DEVICE_HEADERS: &[(&str, &str)] = &[
    (
        "autarky/abi.h",
        include_str!("../../../device/include/autarky/abi.h"),
    ),
    (
        "autarky/order.cuh",
        include_str!("../../../device/include/autarky/order.cuh"),
    ),
    (
        "autarky/trace.cuh",
        include_str!("../../../device/include/autarky/trace.cuh"),
    ),
    (
        "autarky/wait.cuh",
        include_str!("../../../device/include/autarky/wait.cuh"),
    ),
    (
        "autarky/nvshmem.cuh",
        include_str!("../../../device/include/autarky/nvshmem.cuh"),
    ),
    (
        "autarky/task.cuh",
        include_str!("../../../device/include/autarky/task.cuh"),
    ),
    (
        "autarky/progress.cuh",
        include_str!("../../../device/include/autarky/progress.cuh"),
    ),
    (
        "autarky/scheduler.cuh",
        include_str!("../../../device/include/autarky/scheduler.cuh"),
    ),
];

/// The megakernel's entry source.
pub const MEGAKERNEL_CU: &str = include_str!("../../../device/megakernel.cu");

/// Name of the generated header with task bodies and dispatch.
pub const USER_TASKS_HEADER: &str = "autarky/user_tasks.cuh";

/// Kernel entry points.
pub const MEGAKERNEL_NAME: &str = "autarky_megakernel";
/// The ABI layout probe kernel.
pub const PROBE_NAME: &str = "autarky_abi_probe";

/// The generated `autarky/user_tasks.cuh`: every kind's source in id order,
/// then `autarky_dispatch<Comm, Checked>`, a switch over the ids of the
/// kinds of one role (no magic numbers: the case labels are the ids the
/// graph assigned at registration), and `autarky_kind_known<Comm>`, whether
/// an id is one of them. Comm blocks run only comm kinds and compute blocks
/// only the others (the lowered graph keeps them in separate queues and
/// pinned lists), so each loop inlines only its role's bodies: with every
/// body in every loop, one kind's registers weighed on all (the CG
/// megakernel's spills doubled when one SpMV mode was added). A kind of
/// the other role reaching a switch is reported as unknown and aborts —
/// unless the caller checked it with `autarky_kind_known` beforehand
/// (`Checked = false`: the pinned solo and round paths check their tasks'
/// kinds once, when the block caches its list, and then dispatch with no
/// unknown-kind branch — with one kind of the role, no compare at all).
pub fn user_tasks_header(kinds: &[TaskKind]) -> String {
    let mut out =
        String::from("// GENERATED for one graph: task bodies and dispatch.\n#pragma once\n");
    for (id, k) in kinds.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n// ---- task kind {id}: {}\n#line 1 \"kind_{}.cu\"",
            k.name, k.name
        );
        out.push_str(&k.source);
        out.push('\n');
    }
    // Errors in the dispatch (a kind whose source defines no function of
    // its name) are reported at these lines, each naming its kind, not at
    // a line past the end of the last kind's snippet.
    // -DAUTARKY_EXP_DISPATCH_ANY_ROLE: every loop switches over every kind
    // (the former dispatch; the A/B control).
    out.push_str(
        "\n#line 1 \"autarky_dispatch.cu\"\ntemplate <bool Comm, bool Checked>\n__device__ __forceinline__ void autarky_dispatch(autarky::TaskCtx& ctx, uint32_t kind) {\n#ifdef AUTARKY_EXP_DISPATCH_ANY_ROLE\n    constexpr bool any = true;\n#else\n    constexpr bool any = false;\n#endif\n",
    );
    for comm in [true, false] {
        let _ = writeln!(
            out,
            "    if ({}Comm || any) {{\n        switch (kind) {{",
            if comm { "" } else { "!" }
        );
        for (id, k) in kinds.iter().enumerate().filter(|(_, k)| k.comm == comm) {
            let _ = writeln!(
                out,
                "            case {id}u: {}(ctx); return;  // kind `{}`",
                k.name, k.name
            );
        }
        out.push_str("            default: break;\n        }\n    }\n");
    }
    out.push_str(
        "    // The caller checked the kind (autarky_kind_known): not reached.\n\
         \x20   if constexpr (!Checked) __builtin_unreachable();\n\
         \x20   // Unknown kind (or one of the other role): record and abort, never\n\
         \x20   // fall through.\n\
         \x20   if (threadIdx.x == 0) {\n\
         \x20       autarky::Who w{ctx.params, ctx.block, (uint32_t)(Comm ? autarky::Role::Comm : autarky::Role::Compute)};\n\
         \x20       autarky::record_error(w, autarky::ErrorCode::UnknownTaskKind, ctx.local, ctx.iteration,\n\
         \x20                             autarky::WaitKind::None, 0, 0, 0, kind);\n\
         \x20       atomicExch(ctx.failed, 1u);\n\
         \x20   }\n}\n",
    );
    out.push_str("\ntemplate <bool Comm>\n__device__ __forceinline__ bool autarky_kind_known(uint32_t kind) {\n    switch (kind) {\n");
    for (id, k) in kinds.iter().enumerate() {
        let _ = writeln!(
            out,
            "        case {id}u: return {}Comm;",
            if k.comm { "" } else { "!" }
        );
    }
    out.push_str("        default: return false;\n    }\n}\n");
    out
}

/// Every header the megakernel includes, generated one last.
pub fn headers(user_tasks: &str) -> Vec<(&str, &str)> {
    let mut h: Vec<(&str, &str)> = DEVICE_HEADERS.to_vec();
    h.push((USER_TASKS_HEADER, user_tasks));
    h
}

/// What a megakernel is compiled with besides its kinds and block size:
/// each variant is a different cubin (and a different cache entry, since
/// the NVRTC options differ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Compile the trace rings in (`-DAUTARKY_TRACE`, device/include/autarky/trace.cuh).
    /// Off: the kernel has no trace code at all.
    pub trace: bool,
    /// PEs the launch hosts (`-DAUTARKY_LOCAL_PES`; 0 is taken as 1): with
    /// one, the kernel reads its parameters as constants.
    pub local_pes: u32,
    /// Features the graph does not use, compiled out of the kernel (its
    /// register count, hence occupancy, is set by its largest path).
    pub lean: Lean,
    /// Counted tasks keep one arrival slot per instance instead of one
    /// counter (`-DAUTARKY_SLOTS`, [`uses_arrival_slots`]).
    pub slots: bool,
}

/// Does a launch of `run` for `iterations` give its counted tasks arrival
/// slots (`-DAUTARKY_SLOTS`)? When some PE counts and every PE's slot table
/// ([`LoweredGraph::arrival_slot_words`](crate::graph::LoweredGraph::arrival_slot_words),
/// 8 bytes a word) fits in `max_bytes` and every counted task's
/// predecessor edges fit a slot's count (at most
/// [`SLOT_MAX_COUNT`](autarky_shared::SLOT_MAX_COUNT)). Slots are exact: an instance is
/// known ready when its slot is full, with no predecessor read, so a join
/// can run the instances its inputs ran ahead through without checking
/// each. A table over the limit (many counted tasks, many iterations)
/// gets the one-counter protocol, which a readiness check confirms.
pub fn uses_arrival_slots(run: &crate::graph::LoweredRun, iterations: u32, max_bytes: u64) -> bool {
    run.pes.iter().any(|l| l.uses_counting())
        && run.pes.iter().all(|l| {
            l.counted_fit_slots() && l.arrival_slot_words(iterations).saturating_mul(8) <= max_bytes
        })
}

/// Scheduler features a graph may not need (`false`: compiled in).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Lean {
    /// No pinned task anywhere (`-DAUTARKY_NO_PINNED`).
    pub no_pinned: bool,
    /// No comm-role task anywhere (`-DAUTARKY_NO_COMM_WORK`).
    pub no_comm_work: bool,
    /// No edge between PEs (`-DAUTARKY_NO_REMOTE`).
    pub no_remote: bool,
    /// No counted task anywhere (`-DAUTARKY_NO_COUNTED`).
    pub no_counted: bool,
    /// No kind that may finish the run early anywhere (`-DAUTARKY_NO_STOP`:
    /// the limit is the iteration count, carried limits compiled out).
    pub no_stop: bool,
    /// No pinned compute list of one task of at most
    /// [`SOLO_WIDE_PREDS`](crate::graph::SOLO_WIDE_PREDS) predecessors
    /// (`-DAUTARKY_NO_PIN_SOLO`: the solo path, a second copy of the
    /// bodies in the kernel, compiled out).
    pub no_solo: bool,
    /// A solo list awaits more than
    /// [`SOLO_PREDS`](crate::graph::SOLO_PREDS) predecessors
    /// (`-DAUTARKY_SOLO_WIDE`: the solo path holds eight).
    pub solo_wide: bool,
    /// No pinned compute list runs on the round path
    /// ([`LoweredGraph::is_round_list`](crate::graph::LoweredGraph::is_round_list);
    /// `-DAUTARKY_NO_PIN_ROUND`: compiled out).
    pub no_round: bool,
    /// A round list has a task that waits for an earlier one of the list
    /// in the same iteration
    /// ([`LoweredGraph::round_waits_inside`](crate::graph::LoweredGraph::round_waits_inside);
    /// `-DAUTARKY_ROUND_DEP`: the round's loop reads the failure flag
    /// between bodies where a task needs it; without it, such a list
    /// leaves the round path on the device).
    pub round_dep: bool,
}

impl Lean {
    /// What `run` leaves unused.
    pub fn of(run: &crate::graph::LoweredRun) -> Lean {
        Lean {
            no_pinned: run
                .pes
                .iter()
                .all(|l| l.pin_compute_slots == 0 && l.pin_comm_slots == 0),
            no_comm_work: run.pes.iter().all(|l| l.first_comm == l.num_tasks),
            no_remote: run
                .pes
                .iter()
                .all(|l| l.num_proxies == 0 && l.remote.is_empty()),
            no_counted: run.pes.iter().all(|l| !l.uses_counting()),
            no_stop: run.pes.iter().all(|l| !l.may_stop),
            no_solo: run.pes.iter().all(|l| !l.has_solo_list()),
            solo_wide: run
                .pes
                .iter()
                .any(|l| l.solo_preds().is_some_and(|n| n > crate::graph::SOLO_PREDS)),
            no_round: run.pes.iter().all(|l| !l.has_round_list()),
            round_dep: run.pes.iter().any(|l| l.has_round_waiting_inside()),
        }
    }
}

/// NVRTC options for the default (untraced) megakernel with `threads`
/// threads per block.
pub fn options(threads: u32) -> Vec<String> {
    options_for(threads, Variant::default())
}

/// NVRTC options for a megakernel variant with `threads` threads per block.
pub fn options_for(threads: u32, variant: Variant) -> Vec<String> {
    let mut o = vec![
        "--std=c++17".into(),
        format!("-DAUTARKY_THREADS={threads}"),
        format!("-DAUTARKY_LOCAL_PES={}", variant.local_pes.max(1)),
        "-lineinfo".into(),
    ];
    // Fault-injection hooks exist in the device code only in builds that
    // can use them; otherwise they are compiled out of the hot loop.
    if cfg!(feature = "fault-injection") {
        o.push("-DAUTARKY_FAULTS".into());
    }
    // Developer aid: extra NVRTC options (e.g. `--ptxas-options=-v`, whose
    // report NVRTC logs at debug level), part of the cubin cache key.
    if let Ok(extra) = std::env::var("AUTARKY_NVRTC_EXTRA") {
        o.extend(extra.split_whitespace().map(String::from));
    }
    for (off, flag) in [
        (variant.lean.no_pinned, "-DAUTARKY_NO_PINNED"),
        (variant.lean.no_comm_work, "-DAUTARKY_NO_COMM_WORK"),
        (variant.lean.no_remote, "-DAUTARKY_NO_REMOTE"),
        (variant.lean.no_counted, "-DAUTARKY_NO_COUNTED"),
        (variant.lean.no_stop, "-DAUTARKY_NO_STOP"),
        (
            variant.lean.no_solo || variant.lean.no_pinned,
            "-DAUTARKY_NO_PIN_SOLO",
        ),
        (
            variant.lean.solo_wide && !variant.lean.no_solo && !variant.lean.no_pinned,
            "-DAUTARKY_SOLO_WIDE",
        ),
        (
            variant.lean.no_round || variant.lean.no_pinned,
            "-DAUTARKY_NO_PIN_ROUND",
        ),
        (
            variant.lean.round_dep && !variant.lean.no_round && !variant.lean.no_pinned,
            "-DAUTARKY_ROUND_DEP",
        ),
    ] {
        if off {
            o.push(flag.into());
        }
    }
    if variant.slots && !variant.lean.no_counted {
        o.push("-DAUTARKY_SLOTS".into());
    }
    if variant.trace {
        o.push("-DAUTARKY_TRACE".into());
    }
    o
}

/// Compiles the megakernel for a graph's kinds to a CUBIN for `sm_{arch}`.
pub fn compile(kinds: &[TaskKind], threads: u32, arch: u32) -> crate::Result<Vec<u8>> {
    compile_variant(kinds, threads, arch, Variant::default())
}

/// Compiles a megakernel variant (for example with trace rings) for a
/// graph's kinds to a CUBIN for `sm_{arch}`.
pub fn compile_variant(
    kinds: &[TaskKind],
    threads: u32,
    arch: u32,
    variant: Variant,
) -> crate::Result<Vec<u8>> {
    let user = user_tasks_header(kinds);
    let headers = headers(&user);
    super::nvrtc::compile_cubin(&super::nvrtc::Program {
        name: "megakernel.cu",
        source: MEGAKERNEL_CU,
        headers: &headers,
        options: options_for(threads, variant),
        arch,
    })
}
