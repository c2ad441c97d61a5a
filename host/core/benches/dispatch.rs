//! Pipeline dispatch overhead: `Host::call_tool` of a tiny tool (the built-in
//! `oc_totp_generate`: one HMAC), each call in a fresh plugin instance, with the
//! journal and trace written. Prints median / p90 / p99 in µs, the same inside an
//! active task run (the run lookup, the intent guard and hints), and a call
//! rejected by validation. Where the time goes, in the same run: the same call
//! with the journal and trace off, and a native tool (no plugin instance) with
//! and without them: the pipeline's own share.
//!
//! Run: `cargo bench -p ochre-host --bench dispatch`. Target: median ≤ 50 µs.

mod common;

use std::time::Instant;

use ochre_host::native::typed_tool;
use ochre_host::stores::journal::JournalOutput;
use ochre_host::{CallOptions, Host, ToolOutput};
use serde_json::{Value, json};

const WARMUP: usize = 200;
const CALLS: usize = 3000;

fn main() {
    let data = std::env::temp_dir().join(format!("ochre-bench-dispatch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    ochre_host::stores::secrets::SecretStore::new(&data)
        .set("totp", "bench.example", "JBSWY3DPEHPK3PXP")
        .expect("secret");
    // As on a server, the secrets file was written well before the calls.
    let file = std::fs::File::options().write(true).open(data.join("secrets.json"));
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    file.and_then(|f| f.set_modified(old)).expect("secrets file time");
    let rt = common::runtime();
    rt.block_on(async {
        let host = Host::builder().data_dir(&data).build().await.expect("host");
        let args = json!({"domain": "bench.example"});
        let mut samples = measure(&host, "oc_totp_generate", &args, true).await;
        // The same with a rejected call (validation only), for comparison.
        let mut rejected = measure(&host, "oc_totp_generate", &json!({"domain": 1}), false).await;
        // The same call inside the session's active task run.
        host.call_tool(
            "oc_task_run_start",
            json!({"goal": "generate codes"}),
            CallOptions::default(),
        )
        .await
        .expect("run");
        let mut in_run = measure(&host, "oc_totp_generate", &args, true).await;
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
        let median = q(&mut samples, 0.5);
        host.shutdown().await;

        // Where the time goes: the plugin call without journal and trace, and a
        // native tool (the pipeline alone) with and without them.
        let quiet = Host::builder().data_dir(&data).journal(JournalOutput::Off).build().await;
        let quiet = quiet.expect("host");
        let mut plugin_quiet = measure(&quiet, "oc_totp_generate", &args, true).await;
        quiet.shutdown().await;
        for (label, output) in [("with", JournalOutput::Files), ("without", JournalOutput::Off)] {
            let native = Host::builder()
                .data_dir(&data)
                .builtin_plugins(false)
                .journal(output)
                .tool(typed_tool("noop", "Nothing.", |_: Value, _| async {
                    Ok(ToolOutput::json(json!({})))
                }))
                .build()
                .await
                .expect("host");
            let mut t = measure(&native, "noop", &json!({}), true).await;
            println!(
                "a native tool (the pipeline alone), {label} journal and trace: median {:.1} µs ({:.2}x the plugin call)",
                q(&mut t, 0.5),
                q(&mut t, 0.5) / median
            );
            native.shutdown().await;
        }
        println!(
            "the plugin call without journal and trace: median {:.1} µs ({:.2}x)",
            q(&mut plugin_quiet, 0.5),
            q(&mut plugin_quiet, 0.5) / median
        );
        println!("target: median ≤ 50 µs -> ratio {:.2}", median / 50.0);
    });
    let _ = std::fs::remove_dir_all(&data);
}

/// `CALLS` timed calls of `tool` after a warm-up, in µs; each must succeed
/// (`ok`) or fail.
async fn measure(host: &Host, tool: &str, args: &Value, ok: bool) -> Vec<f64> {
    for _ in 0..WARMUP {
        let out = host.call_tool(tool, args.clone(), CallOptions::default()).await;
        assert_eq!(out.is_ok(), ok, "{tool}");
    }
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let t = Instant::now();
        let out = host.call_tool(tool, args.clone(), CallOptions::default()).await;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
        assert_eq!(out.is_ok(), ok, "{tool}");
    }
    samples
}
