//! Heavy applications nobody here wrote, installed from PyPI at test time (never
//! copied into the repository) and driven as an agent would: a reactive notebook
//! (marimo), a Python UI framework whose widgets are Quasar components over Vue
//! (NiceGUI), and an SQLite browser (sqlite-web). Every pass runs its calls back
//! to back with no sleeps, then again with the page's CPU throttled 4x; every
//! effect is checked on the server side (the file the notebook's code wrote, the
//! JSON the app's handler wrote, the SQLite file).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use ochre_tests::*;
use serde_json::{Value, json};

/// The passes: back to back, then with the page slowed 4x.
const PASSES: [(u32, f64); 2] = [(1, 1.0), (2, 4.0)];

async fn open(client: &Client, url: &str, slow: f64) -> Result<()> {
    navigate(client, url).await?;
    if slow > 1.0 {
        client.tool_json("network", json!({"cpuSlowdown": slow})).await?;
    }
    Ok(())
}

/// A call that must succeed: its text.
async fn ok_text(client: &Client, tool: &str, args: Value) -> Result<String> {
    let r = client.tool(tool, args.clone()).await?;
    anyhow::ensure!(r.is_error != Some(true), "{tool} {args}: {}", texts(&r));
    Ok(texts(&r))
}

/// The ref an answer gave the focused element (`focus textbox ax_7`).
fn focused_ref(answer: &str) -> Option<String> {
    let at = answer.find("focus ")?;
    let rest = &answer[at..];
    let r = rest.split_whitespace().find(|w| w.starts_with("ax_"))?;
    Some(r.trim_end_matches([';', ',']).to_owned())
}

/// A venv's console script (`marimo`, `sqlite_web`) beside its `python`.
fn script(python: &Path, name: &str) -> std::path::PathBuf {
    python.with_file_name(name)
}

#[tokio::test]
async fn marimo_cell_typed_run_and_its_output_read() -> Result<()> {
    let python = python_venv("marimo")?;
    let dir = TempDir::new("heavy-marimo");
    std::fs::copy(fixture_app("../fixtures/apps/marimo_notebook.py"), dir.path().join("nb.py"))?;
    let port = free_port()?;
    let mut cmd = Command::new(script(&python, "marimo"));
    cmd.current_dir(dir.path())
        .env("HOME", dir.path())
        .args(["edit", "nb.py", "--headless", "--no-token", "--skip-update-check"])
        .args(["--no-sandbox", "-p", &port.to_string()]);
    let app = PyApp::start(cmd, port, "marimo").await?;
    let data = TempDir::new("heavy-marimo-ochre");
    let client = stdio_client(data.path(), &[], &[]).await?;
    // The notebook renders after its page loads: an agent waits for an editor.
    // Both passes work on this page (leaving it asks to confirm: unsaved cells).
    navigate(&client, &app.url("/")).await?;
    ok_text(&client, "wait_for", json!({"type": "selector", "value": ".cm-content"})).await?;
    // The kernel's first run is its start-up (imports, a cold interpreter):
    // on a loaded machine it may show its output seconds later, past any
    // pause an answer can wait out. An agent waits for that once; so does
    // this test, and the passes below then hold the answer to its output.
    // While it starts (the notebook's own cell runs as the page opens), a new
    // cell may not take the focus (the click's answer names no focused
    // editor: seen on a new machine, twice in a row), or the notebook may
    // draw its editor again after the click's answer (the typing's ref is
    // then stale, STALE_REF): the agent adds a cell again, as here (at most
    // four tries; the last answer and the page are in the error).
    // (Its buttons show their words in capitals: so are they named, by find
    // as by the snapshot.)
    let mut tries = 0;
    loop {
        tries += 1;
        let found = ok_text(&client, "find", json!({"query": "Python button"})).await?;
        let add = find_ref(&found, "button", "PYTHON").with_context(|| found.clone())?;
        let added = ok_text(&client, "interact", json!({"ref": add})).await?;
        // (Shown when the test fails: which try the cell was typed in.)
        eprintln!("try {tries}: {added}");
        let said = match focused_ref(&added) {
            None => format!("no focused editor: {added}"),
            Some(cell) => {
                let text = "\"warm\" * 3";
                let typed = client.tool("type", json!({"ref": cell, "text": text})).await?;
                if typed.is_error != Some(true) {
                    ok_text(&client, "press_key", json!({"key": "Control+Enter", "ref": cell}))
                        .await?;
                    break;
                }
                let said = texts(&typed);
                anyhow::ensure!(said.contains("STALE_REF"), "try {tries}: {said}");
                said
            }
        };
        if tries == 4 {
            anyhow::bail!("try {tries}: {said}\nthe page:\n{}", snapshot(&client).await?);
        }
    }
    let shown = "document.body.innerText.includes('warmwarmwarm')";
    let wait = json!({"type": "function", "value": shown, "timeout": 60000});
    if let Err(e) = ok_text(&client, "wait_for", wait).await {
        anyhow::bail!("{e:#}\nthe page:\n{}", snapshot(&client).await?);
    }
    for (run, slow) in PASSES {
        if slow > 1.0 {
            client.tool_json("network", json!({"cpuSlowdown": slow})).await?;
        }
        // A new Python cell; its editor takes the focus.
        let found = ok_text(&client, "find", json!({"query": "Python button"})).await?;
        let add = find_ref(&found, "button", "PYTHON").with_context(|| found.clone())?;
        let added = ok_text(&client, "interact", json!({"ref": add})).await?;
        let cell = focused_ref(&added).with_context(|| format!("no focused editor: {added}"))?;
        // Multi-line code, key by key (a reactive notebook refuses a name two
        // cells define: each pass has its own).
        let v = format!("v{run}");
        let want = 6 * 7 + run;
        let code = format!(
            "{v} = 6 * 7 + {run}\nopen(\"result-{run}.txt\", \"w\").write(str({v}))\nprint(\"written\", {v})\n{v} * 1000"
        );
        let typed = ok_text(&client, "type", json!({"ref": cell, "text": code})).await?;
        assert!(!typed.contains("note:"), "the editor holds what was typed: {typed}");
        let ran =
            ok_text(&client, "press_key", json!({"key": "Control+Enter", "ref": cell})).await?;
        // The run's answer came once its output was shown: it is in the next
        // snapshot, under the editor that holds the code with its line breaks,
        // and find finds it.
        let out = format!("{}", want * 1000);
        let snap = snapshot(&client).await?;
        assert!(snap.contains(&format!("\"{out}\"")), "the run said {ran}, the page:\n{snap}");
        // The kernel wrote its file (the server side).
        let file = dir.path().join(format!("result-{run}.txt"));
        eventually("the cell's file", std::time::Duration::from_secs(20), || async {
            Ok(std::fs::read_to_string(&file).ok().as_deref() == Some(&want.to_string()))
        })
        .await?;
        let editor = snap
            .lines()
            .find(|l| l.contains(&format!(" {cell} ")) || l.ends_with(&format!(" {cell}")))
            .with_context(|| format!("no line of {cell} in {snap}"))?;
        assert!(editor.contains(&format!("={}", json!(code))), "{editor}");
        let at_editor = snap.find(editor).unwrap_or(0);
        let at_out =
            snap.find(&format!("\"{out}\"")).with_context(|| format!("no {out}: {snap}"))?;
        assert!(at_out > at_editor, "the output follows its cell:\n{snap}");
        assert!(snap.contains(&format!("written {want}")), "{snap}");
        let found = ok_text(&client, "find", json!({"query": out})).await?;
        assert!(found.starts_with(&format!("text \"{out}\" ax_")), "{found}");
    }
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn nicegui_widgets_filled_and_submitted() -> Result<()> {
    let python = python_venv("nicegui")?;
    let dir = TempDir::new("heavy-nicegui");
    let out = dir.path().join("submitted.json");
    let port = free_port()?;
    let mut cmd = Command::new(&python);
    cmd.current_dir(dir.path())
        .env("HOME", dir.path())
        .arg(fixture_app("../fixtures/apps/nicegui_form.py"))
        .arg(port.to_string())
        .arg(&out);
    let app = PyApp::start(cmd, port, "the NiceGUI app").await?;
    let data = TempDir::new("heavy-nicegui-ochre");
    let client = stdio_client(data.path(), &[], &[]).await?;
    for (run, slow) in PASSES {
        let _ = std::fs::remove_file(&out);
        open(&client, &app.url("/"), slow).await?;
        let snap = snapshot(&client).await?;
        // Quasar's focusable boxes (the layout around the page, a field's box
        // around its input) are named nothing, as Chromium names them: their
        // words are their controls', named under them.
        let boxed = snap.lines().map(str::trim_start).find(|l| {
            l.starts_with("generic \"") && (l.contains("Traveller name") || l.contains("Trip form"))
        });
        assert!(boxed.is_none(), "{boxed:?} in\n{snap}");
        let r = |role: &str, name: &str| ref_of(&snap, role, name);
        let set = |r: String, v: Value| {
            let client = &client;
            async move { ok_text(client, "form_input", json!({"ref": r, "value": v})).await }
        };
        let name = format!("Ada Lovelace {run}");
        let said = set(r("textbox", "Traveller name"), json!(name)).await?;
        assert!(said.contains(&format!("={}", json!(name))), "{said}");
        // A custom combobox named by its label, as a form's field: set as
        // form_input sets it (fill_form with that one field).
        let colour = if run == 1 { "Ochre" } else { "Blue" };
        let said = ok_text(&client, "fill_form", json!({"fields": {"Colour": colour}})).await?;
        assert!(said.contains(&format!("it shows \"{colour}\"")), "{said}");
        // A multi-select: both chosen, its list closed after the last.
        let said = set(r("combobox", "Extras"), json!(["Parking", "Sauna"])).await?;
        assert!(said.contains(r#"it shows "Parking, Sauna""#), "{said}");
        // Chosen again: left as it is (a click would unselect it).
        let said = set(r("combobox", "Extras"), json!("Sauna")).await?;
        assert!(said.contains("already chosen"), "{said}");
        // An option that is not there: refused, the choice kept.
        let e = client
            .tool_error("form_input", json!({"ref": r("combobox", "Colour"), "value": "Mauve"}))
            .await?;
        let msg = e["message"].as_str().unwrap_or_default();
        assert!(msg.contains(&format!("shows \"{colour}\" as before")), "{e}");
        // A slider whose value comes back from the server, step by step.
        let nights = 4 + run;
        let said = set(r("slider", "Nights"), json!(nights)).await?;
        assert!(said.contains(&format!("to {nights}")) && !said.contains("note:"), "{said}");
        // Custom checkbox and radio (roles on divs); the checkbox by its name,
        // as a form's field (no native field has it).
        let fields = json!({"fields": {"Send me the newsletter": true}});
        let said = ok_text(&client, "fill_form", fields).await?;
        assert!(said.contains("is now checked"), "{said}");
        let said = set(r("radio", "Suite"), json!(true)).await?;
        assert!(said.contains("is now checked"), "{said}");
        // Quasar shows its buttons' words in capitals, and so are they named.
        // The answer names it so too, and quotes the status it wrote.
        let said = ok_text(&client, "interact", json!({"ref": r("button", "SUBMIT")})).await?;
        assert!(said.contains("Saved 6 fields"), "{said}");
        assert!(said.contains("clicked button \"SUBMIT\""), "{said}");
        // What the app's handler received.
        let got: Value = serde_json::from_str(&std::fs::read_to_string(&out)?)?;
        assert_eq!(
            got,
            json!({"name": name, "colour": colour, "extras": ["Parking", "Sauna"],
                   "nights": nights, "subscribe": true, "room": "Suite"}),
        );
    }
    client.cancel().await?;
    Ok(())
}

/// People, as the sqlite-web tests start them.
const PEOPLE: &[(&str, &str, i64)] = &[
    ("Ada", "London", 36),
    ("Linus", "Helsinki", 28),
    ("Grace", "New York", 45),
    ("Alan", "Manchester", 41),
    ("Edsger", "Rotterdam", 50),
    ("Barbara", "Boston", 33),
];

/// The quoted cells of a snapshot's table rows, in order (`row "1" | "Ada" |
/// link …` → `["1", "Ada"]`): what the page shows, cell by cell.
fn rows(snap: &str) -> Vec<Vec<String>> {
    snap.lines()
        .map(str::trim_start)
        .filter_map(|l| l.strip_prefix("row "))
        .map(|l| {
            l.split(" | ")
                .filter_map(|c| {
                    let c = c.trim();
                    (c.starts_with('"') && c.ends_with('"'))
                        .then(|| serde_json::from_str::<String>(c).ok())
                        .flatten()
                })
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn sqlite_web_sort_filter_and_edit_a_row() -> Result<()> {
    let python = python_venv("sqlite-web")?;
    let dir = TempDir::new("heavy-sqlite-web");
    let db = dir.path().join("people.db");
    let mut make = String::from(
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table person(id integer primary key, name text, city text, age integer)');",
    );
    for (name, city, age) in PEOPLE {
        make.push_str(&format!(
            " c.execute('insert into person(name, city, age) values (?, ?, ?)', ({name:?}, {city:?}, {age}));"
        ));
    }
    make.push_str(" c.commit()");
    let made = Command::new(&python).args(["-c", &make]).arg(&db).output()?;
    anyhow::ensure!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let port = free_port()?;
    let mut cmd = Command::new(script(&python, "sqlite_web"));
    cmd.args(["-H", "127.0.0.1", "-p", &port.to_string(), "-x"]).arg(&db);
    let app = PyApp::start(cmd, port, "sqlite-web").await?;
    let data = TempDir::new("heavy-sqlite-web-ochre");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let db_rows = |sql: &str| sqlite_rows(&python, &db, sql);
    let names = |rows: Vec<Value>| -> Vec<String> {
        rows.iter().map(|r| r[0].as_str().unwrap_or_default().to_owned()).collect()
    };
    for (run, slow) in PASSES {
        // Sort: the header's link; the rows read in the database's order.
        open(&client, &app.url("/person/content/"), slow).await?;
        let snap = snapshot(&client).await?;
        let age = snap
            .lines()
            .find(|l| l.trim_start().starts_with("columns "))
            .and_then(|l| l.split(" | ").find(|c| c.starts_with("link \"age\"")))
            .map(|c| ref_in(c).to_owned())
            .with_context(|| format!("no age column link: {snap}"))?;
        ok_text(&client, "interact", json!({"ref": age})).await?;
        let shown: Vec<String> =
            rows(&snapshot(&client).await?).into_iter().map(|r| r[1].clone()).collect();
        assert_eq!(shown, names(db_rows("select name from person order by age")?));

        // Filter: multi-line SQL in the query page's textarea.
        open(&client, &app.url("/person/query/"), slow).await?;
        let snap = snapshot(&client).await?;
        let sql =
            format!("SELECT name, city\nFROM person\nWHERE age > {}\nORDER BY name", 30 + run);
        let area = snap
            .lines()
            .find(|l| l.trim_start().starts_with("textbox ") && l.contains("SELECT"))
            .map(|l| ref_in(l).to_owned())
            .with_context(|| format!("no SQL textarea: {snap}"))?;
        let said = ok_text(&client, "form_input", json!({"ref": area, "value": sql})).await?;
        assert!(said.contains(&format!("={}", json!(sql))), "line breaks kept: {said}");
        ok_text(&client, "interact", json!({"ref": ref_of(&snap, "button", "Execute")})).await?;
        let snap = snapshot(&client).await?;
        let want: Vec<Vec<String>> = db_rows(&sql.replace('\n', " "))?
            .iter()
            .map(|r| {
                vec![r[0].as_str().unwrap_or("").to_owned(), r[1].as_str().unwrap_or("").to_owned()]
            })
            .collect();
        assert_eq!(rows(&snap), want, "{snap}");
        assert!(snap.contains(r#"columns link "name" ax_"#), "{snap}");

        // Edit a row: its Edit link (in the row of its name), the column's
        // "allow updating" checkbox, the new value, Update.
        open(&client, &app.url("/person/content/"), slow).await?;
        let snap = snapshot(&client).await?;
        let who = if run == 1 { "Grace" } else { "Alan" };
        let row = snap
            .lines()
            .find(|l| l.trim_start().starts_with("row ") && l.contains(&format!("| \"{who}\" |")))
            .with_context(|| format!("no row of {who}: {snap}"))?;
        let edit = row
            .split("link \"Edit\" ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .with_context(|| format!("no Edit link in {row}"))?;
        ok_text(&client, "interact", json!({"ref": edit})).await?;
        let snap = snapshot(&client).await?;
        let lines: Vec<&str> = snap.lines().collect();
        let city_at = lines
            .iter()
            .position(|l| l.trim_start().starts_with("textbox \"city\""))
            .with_context(|| format!("no city field: {snap}"))?;
        let allow = lines[..city_at]
            .iter()
            .rev()
            .find(|l| l.trim_start().starts_with("checkbox "))
            .map(|l| ref_in(l).to_owned())
            .context("no checkbox before the city field")?;
        let city = ref_in(lines[city_at]).to_owned();
        assert!(lines[city_at].contains(" disabled"), "{}", lines[city_at]);
        let said = ok_text(&client, "form_input", json!({"ref": allow, "value": true})).await?;
        assert!(said.contains("checked"), "{said}");
        let new_city = format!("Paris {run}");
        ok_text(&client, "form_input", json!({"ref": city, "value": new_city})).await?;
        ok_text(&client, "interact", json!({"ref": ref_of(&snap, "button", "Update")})).await?;
        let now = db_rows(&format!("select city, age from person where name = '{who}'"))?;
        let age = PEOPLE.iter().find(|p| p.0 == who).map(|p| p.2);
        assert_eq!(now, vec![json!([new_city, age])]);
    }
    client.cancel().await?;
    Ok(())
}
