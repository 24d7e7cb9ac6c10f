//! The one tokio runtime builder of every command that asks the network.

/// The tokio runtime the network work of a command runs on: two workers (the work waits on
/// sockets, it does not compute), with timers and I/O. Every command that asks the network
/// builds its runtime here.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_runtime_runs_tasks_with_timers() {
        let runtime = super::runtime().unwrap();
        let answer = runtime.block_on(async {
            let task = tokio::spawn(async {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                42
            });
            task.await.unwrap()
        });
        assert_eq!(answer, 42);
        assert_eq!(runtime.metrics().num_workers(), 2);
    }
}
