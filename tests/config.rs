//! Configuration a user types is checked at `Builder::build()` and comes
//! back as `Error::InvalidConfig` naming the knob — never a panic. All of
//! these fail before any backend boots, so they run without a GPU.

use std::time::Duration;

use autarky::{Error, Runtime};

/// The message of the `InvalidConfig` that `b.build()` must return.
fn config_error(b: autarky::Builder) -> String {
    match b.build() {
        Err(Error::InvalidConfig(msg)) => msg,
        Err(e) => panic!("expected InvalidConfig, got {e:?}"),
        Ok(rt) => panic!("expected InvalidConfig, got a runtime ({rt:?})"),
    }
}

#[test]
fn threads_per_block_not_a_multiple_of_32_is_refused() {
    let msg = config_error(Runtime::builder().threads_per_block(100));
    assert_eq!(
        msg,
        "threads_per_block must be a multiple of 32 in 32..=1024, got 100"
    );
}

#[test]
fn threads_per_block_out_of_range_is_refused() {
    for t in [0, 1056, 2048] {
        let msg = config_error(Runtime::builder().threads_per_block(t));
        assert!(msg.starts_with("threads_per_block must be"), "{msg}");
        assert!(msg.ends_with(&format!("got {t}")), "{msg}");
    }
    // The bounds themselves are fine (GPU if present, else the emulator,
    // where the GPU knob does not apply).
    for t in [32, 1024] {
        Runtime::builder().threads_per_block(t).build().unwrap();
    }
}

/// A graph's own block shape is checked where it is set, with the same
/// rule as the runtime's; a good one is kept and read back.
#[test]
fn a_graph_block_shape_outside_the_rule_is_refused() {
    let mut g = autarky::Graph::new();
    for t in [0, 31, 100, 1056, 2048] {
        let e = g.set_threads_per_block(t).unwrap_err();
        assert_eq!(e, autarky::GraphError::BadThreadsPerBlock { threads: t });
        assert_eq!(
            e.to_string(),
            format!("threads per block must be a multiple of 32 in 32..=1024, got {t}")
        );
    }
    assert_eq!(g.threads_per_block(), None, "a refused shape is not kept");
    for t in [32, 256, 1024] {
        g.set_threads_per_block(t).unwrap();
        assert_eq!(g.threads_per_block(), Some(t));
    }
}

/// A graph's debug form says which block shape it runs with (None: the
/// runtime's), as its kinds, tasks and edges.
#[test]
fn a_graphs_debug_form_shows_its_block_shape() {
    let mut g = autarky::Graph::new();
    assert!(
        format!("{g:?}").contains("threads_per_block: None"),
        "{g:?}"
    );
    g.set_threads_per_block(256).unwrap();
    assert!(
        format!("{g:?}").contains("threads_per_block: Some(256)"),
        "{g:?}"
    );
}

#[test]
fn zero_comm_blocks_is_refused() {
    let msg = config_error(Runtime::builder().emulator(2).comm_blocks(0));
    assert!(
        msg.starts_with("comm_blocks must be at least 1")
            && msg.contains("publishes progress and runs communication"),
        "{msg}"
    );
}

#[test]
fn zero_compute_blocks_is_refused() {
    let msg = config_error(Runtime::builder().emulator(2).compute_blocks(0));
    assert!(
        msg.starts_with("compute_blocks must be at least 1"),
        "{msg}"
    );
}

#[test]
fn zero_timeout_is_refused() {
    let msg = config_error(Runtime::builder().emulator(2).timeout(Duration::ZERO));
    assert!(msg.starts_with("timeout must be more than zero"), "{msg}");
}

#[test]
fn zero_emulator_threads_is_refused_not_rounded_up() {
    let msg = config_error(Runtime::builder().emulator(0));
    assert!(
        msg.starts_with("emulator threads must be at least 1"),
        "{msg}"
    );
}

#[test]
fn max_tasks_out_of_range_is_refused() {
    let msg = config_error(Runtime::builder().emulator(2).max_tasks(0));
    assert!(msg.starts_with("max_tasks must be in 1..="), "{msg}");
    let msg = config_error(Runtime::builder().emulator(2).max_tasks((1 << 31) + 1));
    assert!(msg.contains("got 2147483649"), "{msg}");
}

#[test]
fn counted_fan_in_below_two_is_refused() {
    for n in [0, 1] {
        let msg = config_error(Runtime::builder().emulator(2).counted_fan_in(n));
        assert!(
            msg.starts_with("counted_fan_in must be at least 2"),
            "{msg}"
        );
    }
    let msg = config_error(Runtime::builder().gpu().counted_fan_in(1));
    assert!(msg.contains("counted_fan_in"), "{msg}");
}

#[test]
fn configuration_errors_come_before_looking_for_a_gpu() {
    // With gpu() and a bad knob the error is the knob, not NoGpu, on any
    // machine: the check runs before the backend boots.
    let msg = config_error(Runtime::builder().gpu().threads_per_block(33));
    assert!(msg.contains("threads_per_block"), "{msg}");
}

#[test]
fn pe_and_gpu_counts_are_checked_before_anything_boots() {
    let msg = config_error(Runtime::builder().emulator(2).pes(0));
    assert!(msg.starts_with("pes must be a multiple of gpus"), "{msg}");
    let msg = config_error(Runtime::builder().emulator(2).pes(17));
    assert!(msg.contains("at most 16 PEs per GPU, got 17"), "{msg}");
    let msg = config_error(Runtime::builder().gpu().gpus(2).pes(3));
    assert!(msg.contains("multiple of gpus (2)"), "{msg}");
    let msg = config_error(Runtime::builder().gpu().gpus(0));
    assert!(msg.starts_with("gpus must be at least 1"), "{msg}");
    // Several GPUs on the emulator are refused, naming the backend.
    match Runtime::builder().emulator(2).gpus(2).pes(2).build() {
        Err(autarky::Error::Unsupported {
            backend, option, ..
        }) => assert_eq!((backend, option), ("emulator", "Builder::gpus")),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    // 16 PEs on one GPU (or the emulator) are fine.
    Runtime::builder().emulator(1).pes(16).build().unwrap();
}

/// `Duration::MAX` ("no timeout") is honoured as the longest timeout,
/// `MAX_TIMEOUT`, in the builder and in a run's options: the run completes
/// (it once overflowed a deadline in a worker thread, and the run hung).
#[test]
fn the_longest_timeouts_mean_no_timeout_not_an_overflow() {
    let rt = Runtime::builder()
        .emulator(1)
        .timeout(Duration::MAX)
        .build()
        .unwrap();
    let mut g = autarky::Graph::new();
    let k = g
        .add_kind(autarky::TaskKind::new("k", "").with_cpu(|_| Ok(())))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.add_edge(a, b);
    assert_eq!(rt.run(&g, 3).unwrap().instances, 6);
    let mut opts = autarky::RunOptions::iterations(3);
    opts.timeout = Some(Duration::MAX);
    assert_eq!(rt.run_with(&g, opts).unwrap().instances, 6);
    assert_eq!(autarky::runtime::MAX_TIMEOUT, Duration::from_nanos(1 << 62));
}

/// A symmetric heap larger than the host can give is an error from the
/// first `alloc_symmetric`, not an abort of the process (it once died with
/// "memory allocation of 4503599627370496 bytes failed").
#[test]
fn an_emulator_heap_larger_than_memory_is_an_error() {
    let rt = Runtime::builder()
        .emulator(1)
        .symmetric_heap_bytes(1 << 52)
        .build()
        .unwrap();
    match rt.alloc_symmetric::<u8>(16) {
        Err(e @ Error::HostMemory { .. }) => {
            assert!(e.to_string().contains("symmetric heap"), "{e}")
        }
        other => panic!("expected HostMemory, got {:?}", other.map(|_| ())),
    }
}

/// `emulator(n).gpus(2)` is refused for what it is — the emulator has no
/// GPUs — not as a PE count that does not divide by 2.
#[test]
fn gpus_on_the_emulator_is_refused_as_such() {
    match Runtime::builder().emulator(1).gpus(2).build() {
        Err(Error::Unsupported { option, .. }) => assert_eq!(option, "Builder::gpus"),
        other => panic!("expected Unsupported, got {:?}", other.map(|_| ())),
    }
}
