//! Pipeline dispatch overhead: `Host::call_tool` of a tiny tool (the built-in
//! `oc_totp_generate`: one HMAC), each call in a fresh plugin instance, with the
//! journal and trace written. Prints median / p90 / p99 in µs, the same inside an
//! active task run (the run lookup, the intent guard and hints), and a call
//! rejected by validation.
//!
//! Run: `cargo bench -p ochre-host --bench dispatch`. Target: median ≤ 100 µs.

mod common;

use std::time::Instant;

use ochre_host::{CallOptions, Host};
use serde_json::json;

const WARMUP: usize = 200;
const CALLS: usize = 3000;

fn main() {
    let data = std::env::temp_dir().join(format!("ochre-bench-dispatch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    ochre_host::secrets::SecretStore::new(&data)
        .set("totp", "bench.example", "JBSWY3DPEHPK3PXP")
        .expect("secret");
    let rt = common::runtime();
    rt.block_on(async {
        let host = Host::builder().data_dir(&data).build().await.expect("host");
        let args = json!({"domain": "bench.example"});
        for _ in 0..WARMUP {
            host.call_tool("oc_totp_generate", args.clone(), CallOptions::default())
                .await
                .expect("call");
        }
        let mut samples = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let t = Instant::now();
            let out = host
                .call_tool("oc_totp_generate", args.clone(), CallOptions::default())
                .await;
            samples.push(t.elapsed().as_secs_f64() * 1e6);
            assert!(out.is_ok());
        }
        // The same with a rejected call (validation only), for comparison.
        let mut rejected = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let t = Instant::now();
            let out = host
                .call_tool("oc_totp_generate", json!({"domain": 1}), CallOptions::default())
                .await;
            rejected.push(t.elapsed().as_secs_f64() * 1e6);
            assert!(out.is_err());
        }
        // The same call inside the session's active task run.
        host.call_tool(
            "oc_task_run_start",
            json!({"goal": "generate codes"}),
            CallOptions::default(),
        )
        .await
        .expect("run");
        let mut in_run = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let t = Instant::now();
            let out = host
                .call_tool("oc_totp_generate", args.clone(), CallOptions::default())
                .await;
            in_run.push(t.elapsed().as_secs_f64() * 1e6);
            assert!(out.is_ok());
        }
        let q = common::quantile;
        println!(
            "dispatch (fresh instance + call + journal + trace): median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs over {CALLS} calls",
            q(&mut samples, 0.5),
            q(&mut samples, 0.9),
            q(&mut samples, 0.99)
        );
        println!(
            "inside an active task run: median {:.1} µs, p90 {:.1} µs ({:.2}x the call without a run)",
            q(&mut in_run, 0.5),
            q(&mut in_run, 0.9),
            q(&mut in_run, 0.5) / q(&mut samples, 0.5)
        );
        println!(
            "rejected by validation: median {:.1} µs",
            q(&mut rejected, 0.5)
        );
        println!("target: median ≤ 100 µs -> ratio {:.2}", q(&mut samples, 0.5) / 100.0);
        host.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&data);
}
