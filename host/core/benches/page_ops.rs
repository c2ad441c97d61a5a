//! Page operations with the page library installed once per document (each
//! operation sends `window[key].run(ctx)`, a few hundred bytes) against the
//! same operations sending the whole library (~100 KB) with every call, as ochre
//! did before, in the same browser and page:
//!
//! - `sent, installed`: the library sent with each call but already installed
//!   (the cost of sending and parsing it; a lower bound of the old cost);
//! - `sent, set up`: the library sent and set up afresh with each call (parse and
//!   set-up; what the old code paid).
//!
//! Prints the median time per operation and the bytes of each call's
//! expression, and the ratios. Run: `cargo bench -p ochre-host --bench page_ops`
//! (needs Chromium, as the tests do).

mod common;
use common::median;
use ochre_host::HostBrowser;

use std::time::Instant;

use ochre_host::{BrowserManager, BrowserOptions};
use serde_json::{Value, json};

const CALLS: usize = 200;

/// A page of a usual size: a form, a nav and a list of 300 linked items.
fn page() -> String {
    let mut html = String::from(
        "<title>Bench</title><nav><a href=#a>Home</a> <a href=#b>Docs</a></nav><main><h1>Items</h1>\
         <form><label>Name <input name=n></label><label>Mail <input type=email name=m></label>\
         <select name=s><option>a</option><option>b</option></select><button>Send</button></form><ul>",
    );
    for i in 0..300 {
        html.push_str(&format!(
            "<li><a href=#i{i}>Item {i}</a> <span>detail {i}</span> <button>Buy {i}</button></li>"
        ));
    }
    html.push_str("</ul></main>");
    format!("data:text/html,{}", html.replace('#', "%23"))
}

fn main() {
    let rt = common::runtime();
    rt.block_on(async {
        let b = BrowserManager::new(BrowserOptions::default());
        b.navigate(None, &page(), 20_000).await.expect("navigate");
        let raw_key = ochre_host::browser::page_library_key();
        let key = json!(raw_key);
        let library = ochre_host::browser::page_library_under(raw_key);
        let ops: [(&str, Value); 3] = [
            ("ping", json!({})),
            ("find", json!({"query": "Buy 150"})),
            ("snapshot", json!({})),
        ];
        println!("op        installed         sent, installed             sent, set up");
        for (op, args) in ops {
            b.page_op(None, op, args.clone(), 30_000).await.expect("op");
            let mut now = Vec::with_capacity(CALLS);
            for _ in 0..CALLS {
                let t = Instant::now();
                b.page_op(None, op, args.clone(), 30_000).await.expect("op");
                now.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let ctx = json!({"op": op, "args": args, "base": 1, "expect": {}, "raw": false});
            let short = format!("window[{key}] ? window[{key}].run({ctx}) : \"\"");
            let eval = |expression: String| {
                let b = &b;
                async move {
                    let t = Instant::now();
                    let r = b
                        .cdp_send(
                            None,
                            "Runtime.evaluate",
                            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
                        )
                        .await
                        .expect("evaluate");
                    assert!(r["result"]["value"].get("ok").is_some(), "{r}");
                    t.elapsed().as_secs_f64() * 1e3
                }
            };
            let (mut sent, mut fresh) = (Vec::new(), Vec::new());
            for i in 0..CALLS {
                sent.push(eval(format!("{library}.run({ctx})")).await);
                let own = ochre_host::browser::page_library_under(&format!("__ochre_bench_{i}"));
                fresh.push(eval(format!("{own}.run({ctx})")).await);
            }
            let (now, sent, fresh) = (median(now), median(sent), median(fresh));
            let full = library.len() + ctx.to_string().len() + 5;
            println!(
                "{op:<9} {now:>6.2} ms {:>6} B   {sent:>6.2} ms {full:>6} B ({:.2}x)   {fresh:>6.2} ms ({:.2}x)",
                short.len(),
                now / sent,
                now / fresh,
            );
        }
        b.shutdown().await;
    });
}
