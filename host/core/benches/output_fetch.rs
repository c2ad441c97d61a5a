//! `oc_output_fetch` read throughput: a 10 MB text output stored as a handle,
//! read back page by page through `Host::call_tool` (the pipeline, validation,
//! the journal and trace included), at the default page (64 KiB) and at 1 MiB.
//! Prints MB/s per page size (best of 5 passes).
//!
//! Run: `cargo bench -p ochre-host --bench output_fetch`. Target: ≥ 200 MB/s.

mod common;

use std::time::Instant;

use ochre_host::stores::output::Payload;
use ochre_host::{CallOptions, Host};
use serde_json::json;

const SIZE: usize = 10 * 1000 * 1000;

fn main() {
    let data = std::env::temp_dir().join(format!("ochre-bench-fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let rt = common::runtime();
    rt.block_on(async {
        let host = Host::builder()
            .data_dir(&data)
            .builtin_plugins(false)
            .build()
            .await
            .expect("host");
        let line = "ochre output handle benchmark, a line of text with some words é€ 😀\n";
        let text: String = line.repeat(SIZE / line.len() + 1)[..].chars().take(SIZE).collect();
        let (meta, _) = host
            .outputs()
            .create("bench", &Payload::Text(text.clone()))
            .expect("create");
        let handle = meta.output_handle;
        for limit in [65_536u64, 1 << 20] {
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t = Instant::now();
                let mut offset = 0u64;
                let mut bytes = 0usize;
                loop {
                    let out = host
                        .call_tool(
                            "oc_output_fetch",
                            json!({"output_handle": handle, "offset": offset, "limit": limit, "format": "bytes"}),
                            CallOptions::default(),
                        )
                        .await
                        .expect("fetch");
                    let page = out.structured.expect("structured");
                    bytes += page["content"].as_str().expect("content").len();
                    match page["next_offset"].as_u64() {
                        Some(n) => offset = n,
                        None => break,
                    }
                }
                assert_eq!(bytes, text.len());
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!(
                "oc_output_fetch {} MB in {} KiB pages: {:.0} MB/s (best of 5, {:.1} ms)",
                text.len() / 1_000_000,
                limit / 1024,
                text.len() as f64 / 1e6 / best,
                best * 1e3
            );
        }
    });
    let _ = std::fs::remove_dir_all(&data);
}
