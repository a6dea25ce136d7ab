//! Typed buffers on the emulator backend: host memory that CPU bodies reach
//! through `cpu_slice`/`cpu_slice_mut`. (The GPU side is in tests/gpu.rs.)

use std::sync::{Arc, Barrier};
use std::time::Duration;

use autarky::{Error, Graph, Runtime, TaskKind};

fn emulator() -> Runtime {
    Runtime::builder().emulator(2).build().unwrap()
}

#[test]
fn buffer_round_trips_and_starts_zeroed() {
    let rt = emulator();
    let b = rt.alloc::<u32>(100).unwrap();
    assert_eq!(b.len(), 100);
    assert_eq!(b.backend_name(), "emulator");
    assert_eq!(b.to_vec().unwrap(), vec![0; 100]);
    let data: Vec<u32> = (0..100).map(|i| i * 7 + 1).collect();
    b.copy_from(&data).unwrap();
    assert_eq!(b.to_vec().unwrap(), data);
    b.fill_zero().unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![0; 100]);
    assert_eq!(b.addr() % 64, 0, "buffers are cache-line aligned");
}

#[test]
fn copy_of_the_wrong_length_is_an_error() {
    let b = emulator().alloc::<f64>(4).unwrap();
    match b.copy_from(&[1.0; 3]) {
        Err(e @ Error::BufferSize { .. }) => {
            assert_eq!(
                e.to_string(),
                "Buffer::copy_from: 3 elements for a buffer of 4"
            )
        }
        other => panic!("expected BufferSize, got {other:?}"),
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Axpy {
    x: u64,
    y: u64,
    n: u32,
    a: f32,
}

#[test]
fn cpu_bodies_read_and_write_buffers_by_address() {
    // y += a * x each iteration, in a chain of two tasks over two buffers:
    // t0 updates y0 from x; t1 updates y1 from y0 (after t0).
    let rt = emulator();
    let n = 257;
    let x = rt.alloc::<f32>(n).unwrap();
    let y0 = rt.alloc::<f32>(n).unwrap();
    let y1 = rt.alloc::<f32>(n).unwrap();
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    x.copy_from(&xs).unwrap();
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("axpy", "").args::<Axpy>().with_cpu(|ctx| {
            let a: Axpy = ctx.args();
            let x = autarky::cpu_slice::<f32>(a.x, a.n as usize)?;
            let mut y = autarky::cpu_slice_mut::<f32>(a.y, a.n as usize)?;
            for (y, x) in y.iter_mut().zip(x.iter()) {
                *y += a.a * x;
            }
            Ok(())
        }))
        .unwrap();
    let args = |x: &autarky::Buffer<f32>, y: &autarky::Buffer<f32>, a| Axpy {
        x: x.addr(),
        y: y.addr(),
        n: n as u32,
        a,
    };
    let t0 = g.add_task(k, &args(&x, &y0, 2.0));
    let t1 = g.add_task(k, &args(&y0, &y1, 1.0));
    // t1 reads y0 of the same iteration; the carried edge keeps t0 from
    // overwriting y0 before t1 has read it.
    g.add_edge(t0, t1).add_carried_edge(t1, t0);
    rt.run(&g, 3).unwrap();
    // y0 after iteration i: 2x(i+1); y1 sums y0 over iterations: 2x(1+2+3).
    let (y0, y1) = (y0.to_vec().unwrap(), y1.to_vec().unwrap());
    for i in 0..n {
        assert_eq!(y0[i], 6.0 * xs[i], "y0[{i}]");
        assert_eq!(y1[i], 12.0 * xs[i], "y1[{i}]");
    }
}

#[test]
fn a_body_given_a_bad_address_fails_the_run_instead_of_corrupting_memory() {
    let rt = emulator();
    let b = rt.alloc::<u32>(4).unwrap();
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("poke", "").arg_size_bytes(8).with_cpu(|ctx| {
            let addr: u64 = ctx.args();
            autarky::cpu_slice_mut::<u32>(addr, 8)?[7] = 1; // 8 elements of a 4-element buffer
            Ok(())
        }))
        .unwrap();
    g.add_task(k, &b.addr());
    // The error carries the refusal itself, not only its code (which once
    // reached the caller as "failed with code 2969501924", the reason
    // only in the log).
    match rt.run(&g, 1) {
        Err(e @ Error::TaskBufferAccess { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("task #0") && msg.contains("iteration 0"),
                "{msg}"
            );
            assert!(msg.contains("32 bytes"), "the refused access: {msg}");
        }
        other => panic!("expected TaskBufferAccess, got {other:?}"),
    }
    assert_eq!(b.to_vec().unwrap(), vec![0; 4]);
}

#[test]
fn two_unordered_writers_of_one_buffer_are_refused() {
    // Two independent tasks write the same buffer. Both pass a barrier (so
    // they run at the same time on the two compute threads), then each
    // holds an exclusive borrow for a while: the second borrow overlaps the
    // first and must be refused — the graph lacks an edge between them.
    let rt = emulator();
    let b = rt.alloc::<u64>(16).unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let mut g = Graph::new();
    let k = g
        .add_kind(
            TaskKind::new("writer", "")
                .arg_size_bytes(8)
                .with_cpu(move |ctx| {
                    let addr: u64 = ctx.args();
                    barrier.wait();
                    let mut w = autarky::cpu_slice_mut::<u64>(addr, 16)?;
                    w[ctx.task as usize] = 1;
                    std::thread::sleep(Duration::from_millis(300));
                    Ok(())
                }),
        )
        .unwrap();
    g.add_task(k, &b.addr());
    g.add_task(k, &b.addr());
    match rt.run(&g, 1) {
        Err(Error::TaskBufferAccess { refusal, .. }) => {
            assert_eq!(refusal.addr, b.addr(), "{refusal}")
        }
        other => panic!("expected TaskBufferAccess, got {other:?}"),
    }
}

#[test]
fn host_access_during_a_conflicting_borrow_is_refused() {
    let rt = emulator();
    let b = rt.alloc::<u32>(8).unwrap();
    let guard = autarky::cpu_slice_mut::<u32>(b.addr(), 8).unwrap();
    assert!(matches!(b.to_vec(), Err(Error::BufferAccess(_))));
    assert!(matches!(b.copy_from(&[1; 8]), Err(Error::BufferAccess(_))));
    drop(guard);
    b.copy_from(&[1; 8]).unwrap();
}

#[test]
fn a_gpu_address_means_nothing_to_a_cpu_body() {
    // An address from no emulator buffer is refused (not dereferenced).
    match autarky::cpu_slice::<u8>(0x7f00_0000_0000, 16) {
        Err(e) => assert!(
            e.reason.contains("not inside a live emulator buffer"),
            "{e}"
        ),
        Ok(_) => panic!("an address outside every buffer was accepted"),
    }
}

/// A body that panics: the panic reaches the caller of `run` (as a panic,
/// like a scoped thread's), and its message now says which task, PE and
/// iteration raised it.
#[test]
fn a_panicking_body_re_raises_with_the_task_and_iteration() {
    let rt = emulator();
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("boom", "").with_cpu(|ctx| {
            if ctx.iteration == 2 {
                panic!("the body gave up");
            }
            Ok(())
        }))
        .unwrap();
    let t = g.add_task_bytes(k, &[]);
    g.set_name(t, "the exploding task");
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.run(&g, 5)))
        .expect_err("the panic must reach the caller");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        msg.contains("the exploding task")
            && msg.contains("iteration 2")
            && msg.contains("the body gave up"),
        "{msg:?}"
    );
    // The runtime still runs.
    let mut ok = Graph::new();
    let k = ok
        .add_kind(TaskKind::new("fine", "").with_cpu(|_| Ok(())))
        .unwrap();
    ok.add_task_bytes(k, &[]);
    assert_eq!(rt.run(&ok, 3).unwrap().instances, 3);
}

/// Symmetric buffers on the emulator live in host memory: a host copy
/// racing another thread's copy, or a run in flight, would be a data race.
/// Copies from two threads never tear (each read is all of one write), and
/// a copy while another thread's run is in flight is refused, saying why.
#[test]
fn symmetric_buffer_copies_never_race_each_other_or_a_run() {
    let rt = emulator();
    let s = rt.alloc_symmetric::<u64>(1 << 16).unwrap();
    let (zeros, ones) = (vec![0u64; 1 << 16], vec![u64::MAX; 1 << 16]);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            for _ in 0..100 {
                s.copy_from(0, &zeros).unwrap();
                s.copy_from(0, &ones).unwrap();
            }
        });
        for _ in 0..100 {
            let v = s.to_vec(0).unwrap();
            assert!(v.iter().all(|&x| x == v[0]), "a torn read");
        }
    });
    // A run in flight on another thread: the copy is refused.
    let started = Arc::new(Barrier::new(2));
    let mut g = Graph::new();
    let b = started.clone();
    let k = g
        .add_kind(TaskKind::new("slow", "").with_cpu(move |_| {
            b.wait();
            std::thread::sleep(Duration::from_millis(200));
            Ok(())
        }))
        .unwrap();
    g.add_task_bytes(k, &[]);
    std::thread::scope(|sc| {
        let run = sc.spawn(|| rt.run(&g, 1));
        started.wait();
        match s.to_vec(0) {
            Err(Error::BufferAccess(e)) => assert!(e.reason.contains("in flight"), "{e}"),
            other => panic!("a copy during a run: expected a refusal, got {other:?}"),
        }
        run.join().unwrap().unwrap();
    });
    // After the run, copies work again.
    s.copy_from(0, &ones).unwrap();
    assert_eq!(s.to_vec(0).unwrap(), ones);
}

/// CPU bodies reach symmetric memory as they reach a Buffer: through the
/// checked `cpu_slice` / `cpu_slice_mut`, on their own PE and, through
/// `peer_addr`, on another (it once took raw pointers: "not inside a live
/// emulator buffer").
#[test]
fn cpu_bodies_borrow_symmetric_memory_with_cpu_slice() {
    let rt = Runtime::builder().emulator(2).pes(2).build().unwrap();
    let s = rt.alloc_symmetric::<u32>(8).unwrap();
    s.copy_from(0, &[7; 8]).unwrap();
    let mut g = Graph::new();
    // PE 1's task copies PE 0's values into its own copy, plus its PE.
    let k = g
        .add_kind(TaskKind::new("pull", "").arg_size_bytes(8).with_cpu(|ctx| {
            let mine: u64 = ctx.args();
            let theirs = ctx.peer_addr(mine, 0);
            let src: Vec<u32> = autarky::cpu_slice::<u32>(theirs, 8)?.to_vec();
            let mut dst = autarky::cpu_slice_mut::<u32>(mine, 8)?;
            for (d, v) in dst.iter_mut().zip(src) {
                *d = v + ctx.pe;
            }
            Ok(())
        }))
        .unwrap();
    let t = g.add_task(k, &s.addr(1));
    g.set_pe(t, 1);
    rt.run(&g, 1).unwrap();
    assert_eq!(s.to_vec(1).unwrap(), vec![8; 8]);
    assert_eq!(s.to_vec(0).unwrap(), vec![7; 8]);
}

/// A host thread's `cpu_slice_mut` of symmetric memory and a host copy of
/// the same bytes do not overlap: the copy is refused while the borrow
/// lives, and a body's access past the end of a buffer says so.
#[test]
fn host_borrows_of_symmetric_memory_exclude_host_copies() {
    let rt = emulator();
    let s = rt.alloc_symmetric::<u32>(8).unwrap();
    let guard = autarky::cpu_slice_mut::<u32>(s.addr(0), 8).unwrap();
    match s.to_vec(0) {
        Err(Error::BufferAccess(e)) => assert!(e.reason.contains("overlaps"), "{e}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    drop(guard);
    assert_eq!(s.to_vec(0).unwrap(), vec![0; 8]);
    let b = rt.alloc::<u32>(4).unwrap();
    let e = autarky::cpu_slice::<u32>(b.addr(), 8).err().unwrap();
    assert!(
        e.reason
            .contains("16 bytes past the end of the buffer of 16 bytes"),
        "{e}"
    );
}

/// A buffer the host cannot give is Error::HostMemory, not a
/// configuration error or an abort.
#[test]
fn a_buffer_larger_than_the_host_is_a_host_memory_error() {
    let rt = emulator();
    match rt.alloc::<u8>(1 << 60) {
        Err(Error::HostMemory { bytes, .. }) => assert_eq!(bytes, 1 << 60),
        other => panic!("expected HostMemory, got {:?}", other.map(|_| ())),
    }
}
