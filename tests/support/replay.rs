//! Helpers of the replay tests: an in-process timestamping receiver and a recording proxy on
//! ephemeral loopback ports, and traffic builders.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rehearse::engine::RequestKind;
use rehearse::replay::TrafficLine;
use rehearse::replay::receiver::{Arrival, Arrivals, serve_receiver};
use rehearse::replay::record::{RecordStats, Recorder, serve_recorder};
use tokio::sync::oneshot;

/// A running receiver (on its own thread and runtime, so its wake-ups do not queue behind the
/// replayer's tasks).
pub struct TestReceiver {
    pub url: String,
    pub arrivals: Arc<Arrivals>,
    _stop: oneshot::Sender<()>,
}

/// Runs `make(listener)` to completion on a dedicated thread with a current-thread runtime;
/// returns the bound URL and a handle to the result.
fn on_own_thread<F, Fut, T>(make: F) -> (String, std::thread::JoinHandle<T>)
where
    F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T>,
    T: Send + 'static,
{
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std_listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", std_listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
            make(listener).await
        })
    });
    (url, handle)
}

impl TestReceiver {
    /// Arrivals sorted by arrival instant.
    pub fn sorted(&self) -> Vec<Arrival> {
        let mut a = self.arrivals.snapshot();
        a.sort_by_key(|a| a.at);
        a
    }
}

/// Starts a receiver on 127.0.0.1:0 (inside the current tokio runtime).
pub async fn start_receiver() -> TestReceiver {
    let arrivals = Arc::new(Arrivals::default());
    let (tx, rx) = oneshot::channel::<()>();
    let a = arrivals.clone();
    let (url, _) = on_own_thread(move |listener| {
        serve_receiver(listener, a, async move {
            let _ = rx.await;
        })
    });
    TestReceiver {
        url,
        arrivals,
        _stop: tx,
    }
}

/// A running recording proxy; `stop()` flushes the file and returns the stats.
pub struct TestRecorder {
    pub url: String,
    stop: oneshot::Sender<()>,
    task: std::thread::JoinHandle<std::io::Result<RecordStats>>,
}

impl TestRecorder {
    pub async fn stop(self) -> RecordStats {
        let _ = self.stop.send(());
        let task = self.task;
        tokio::task::spawn_blocking(move || task.join().unwrap().unwrap())
            .await
            .unwrap()
    }
}

/// Starts `rehearse record`'s proxy in-process in front of `upstream`, writing `out`.
pub async fn start_recorder(upstream: &str, out: &Path) -> TestRecorder {
    let recorder = Arc::new(Recorder::create(upstream, out).unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    let (url, task) = on_own_thread(move |listener| {
        serve_recorder(listener, recorder, async move {
            let _ = rx.await;
        })
    });
    TestRecorder {
        url,
        stop: tx,
        task,
    }
}

/// The route a line arrives on at the receiver.
pub fn route_of(line: &TrafficLine) -> String {
    match &line.kind {
        RequestKind::Llm { .. } => "POST /v1/chat/completions".into(),
        RequestKind::Tool { name: tool, .. } => format!("POST /tools/{tool}"),
        RequestKind::Ws { channel, .. } => format!("GET /ws?channel={channel}"),
    }
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Measures how late this machine wakes a sleeping thread: a thread sleeps 1 ms in a loop and
/// keeps the worst oversleep. Real-clock tests print it with each attempt, so a miss on a
/// machine busy with other work (2 cores, several compilers) says so.
pub struct NoiseProbe {
    stop: Arc<std::sync::atomic::AtomicBool>,
    /// Worst oversleep so far, in µs.
    worst_us: Arc<std::sync::atomic::AtomicU64>,
    handle: std::thread::JoinHandle<()>,
}

impl NoiseProbe {
    pub fn start() -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let worst_us = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (s, w) = (stop.clone(), worst_us.clone());
        let handle = std::thread::spawn(move || {
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                let before = tokio::time::Instant::now();
                std::thread::sleep(std::time::Duration::from_millis(1));
                let over = before.elapsed().as_micros().saturating_sub(1000) as u64;
                w.fetch_max(over, std::sync::atomic::Ordering::Relaxed);
            }
        });
        Self {
            stop,
            worst_us,
            handle,
        }
    }

    /// The worst oversleep so far, in ms.
    pub fn worst(&self) -> f64 {
        self.worst_us.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1000.0
    }

    /// Stops the probe; returns the worst oversleep, in ms.
    pub fn stop(self) -> f64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let worst = self.worst_us.clone();
        let _ = self.handle.join();
        worst.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1000.0
    }
}
