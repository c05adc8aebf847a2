//! The request path of `Session::execute`, end to end and stage by stage: the instrument
//! that work on a cheaper request path (issue 29) is measured against.
//!
//! ```sh
//! cargo bench -p doppio-driver --bench request_path                 # everything (~8 min)
//! cargo bench -p doppio-driver --bench request_path -- --quick      # a quick pass (~1 min)
//! cargo bench -p doppio-driver --bench request_path -- e2e/uring    # a filter, as criterion takes it
//! ```
//!
//! Everything runs on one client shard (a `doppio_driver::bench_internals::Shards` executor pinned to core
//! `REQUEST_PATH_CLIENT_CORE`, default 0), once per runtime (`REQUEST_PATH_RUNTIMES`, default
//! `glommio,uring`); criterion's `iter_custom` sends each sample there as a job and the
//! shard times it itself. The statement is the `empty` workload's (`SELECT key FROM
//! system.local WHERE key = 'local'`: no values, no token; the answer is one row of one text
//! cell without metadata), prepared, executed with the session's defaults in protocol v4
//! (what the loopback study's runs with scylla-rust-driver speak).
//!
//! Time is the client thread's CPU time (user and system, `CLOCK_THREAD_CPUTIME_ID`), not
//! wall time, for every bench but `remote_wall`: the machine has two cores that other work
//! shares, and CPU time does not count the time the thread was preempted
//! (`REQUEST_PATH_CLOCK=wall` measures wall time everywhere instead).
//!
//! End to end (`e2e/<runtime>/<peer>/c<C>`): ns per request, `C` requests in flight as `C`
//! fibers (one local task each, as the bench's doppio backend runs them) sharing a count of
//! requests; time / requests. Peers, each the stub server (perf/stub) answering as it does
//! in the loopback study:
//! - `remote`: a stub on its own executor pinned to the other core
//!   (`REQUEST_PATH_STUB_CORE`, default 1; its runtime `REQUEST_PATH_STUB_RUNTIME`, default
//!   uring), over loopback TCP: the loopback study's setting; the client's CPU per request
//!   (what the loopback study calls client CPU per request).
//! - `remote_wall`: the same in wall time (latency at C = 1, throughput at C = 256).
//! - `local_tcp`: the stub served by tasks on the client's own executor, over loopback TCP:
//!   no second core, no cross-core wake-up, but every kernel round trip (both sides' CPU).
//! - `memory`: the same on an in-memory connection (`doppio_rt::memory`): no socket, no
//!   kernel; what is left is the driver, the runtime's task machinery and the stub's own
//!   work (`peer/*` measures the latter alone, to subtract).
//! - `memory_bench_call`: `memory` as the bench's doppio backend calls it: through one more
//!   async function that reads every cell of the page.
//!
//! Stages (each calls the driver's own code through `doppio_driver::bench_internals`; the `stage/*`
//! ones do not involve the executor and run once, on the first runtime's shard):
//! - `stage/encode/*`: the EXECUTE from its template into the write buffer.
//! - `stage/placement/*`: token (when the partition key is bound), replicas, the policy's
//!   pick and the node's connection.
//! - `stage/in_flight`: take a stream id, set its deadline, park on it (the task's real
//!   waker stored), complete it with an answer, poll the answer out, id freed.
//! - `stage/decode/*`: `ResponseFrame::decode` and `result_of` into a `QueryResult`.
//! - `<runtime>/wake`: one waker round trip through the executor: a task wakes a parked one,
//!   which is polled and parks again. Per wake-up.
//! - `<runtime>/submit/<n>`: `n` frames queued as a request queues its frame, the flusher
//!   woken, its swap and the runtime's send (in memory: no kernel), until the peer has the
//!   bytes. Per frame; includes one wake-up of the waiting bench task per batch.
//! - `<runtime>/connection/c<C>`: `Connection::request` alone against the in-memory stub:
//!   id, encode, flush, the stub's answer, the reader, the wake-up; no session level, no
//!   decode.
//! - `<runtime>/peer/c<C>`: the in-memory stub alone, driven by a raw client that writes
//!   pre-encoded EXECUTEs and counts the answers' bytes: what the stub adds to `memory`.
//!
//! The sizes of `QueryResult` and of the request's futures are printed first.
//!
//! Files: `harness` (peers, sessions, the clock, `Bench`), `paths` (the measured paths),
//! `groups` (the criterion groups).

use std::rc::Rc;

use criterion::{criterion_group, criterion_main, Criterion};
use doppio_driver::rt::Runtime;

mod groups;
mod harness;
mod paths;

use groups::{per_runtime, print_sizes, stages};
use harness::Harness;

fn request_path(c: &mut Criterion) {
    let runtimes: Vec<Runtime> = std::env::var("REQUEST_PATH_RUNTIMES")
        .unwrap_or_else(|_| "glommio,uring".into())
        .split(',')
        .map(|r| {
            r.parse()
                .unwrap_or_else(|e| panic!("REQUEST_PATH_RUNTIMES: {e}"))
        })
        .collect();
    let mut sizes_printed = false;
    for (i, runtime) in runtimes.into_iter().enumerate() {
        let h = Rc::new(Harness::start(runtime));
        if !sizes_printed {
            print_sizes(&h);
            sizes_printed = true;
        }
        // The stages that do not involve the executor run once, on the first runtime's shard.
        if i == 0 {
            stages(c, &h);
        }
        per_runtime(c, &h);
    }
}

criterion_group!(benches, request_path);
criterion_main!(benches);
