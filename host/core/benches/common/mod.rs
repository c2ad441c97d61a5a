//! What the benchmarks share (each includes this module with `mod common;`).
#![allow(dead_code)] // each benchmark uses a part

/// A runtime like the server's: two worker threads.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The `p` quantile (0..=1) of samples sorted in place.
pub fn quantile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p) as usize]
}

/// The median of samples.
pub fn median(mut v: Vec<f64>) -> f64 {
    quantile(&mut v, 0.5)
}
