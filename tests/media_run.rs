//! Pictures and reasoning effort through `cairn run`, in every wire format
//! cairn speaks: what reaches the scripted server, and what the person is
//! told when a model cannot take a picture.

use crate::{mock_model, test_home};
use std::io::Cursor;
use std::process::Output;

use base64::Engine;
use mock_model::{Format, MockModel, Reply};
use serde_json::Value;
use test_home::TestHome;

/// One wire format: its `kind`, the server's format, and how a picture
/// shows in its request body.
struct Wire {
    kind: &'static str,
    format: Format,
    marker: &'static str,
}

const WIRES: [Wire; 6] = [
    Wire {
        kind: "anthropic",
        format: Format::Anthropic,
        marker: r#""type":"image""#,
    },
    Wire {
        kind: "openai",
        format: Format::OpenAi,
        marker: r#""url":"data:image/png;base64,"#,
    },
    Wire {
        kind: "openai-responses",
        format: Format::Responses,
        marker: r#""type":"input_image""#,
    },
    Wire {
        kind: "gemini",
        format: Format::Gemini,
        marker: r#""inlineData":{"#,
    },
    Wire {
        kind: "ollama",
        format: Format::Ollama,
        marker: r#""images":["#,
    },
    Wire {
        kind: "bedrock",
        format: Format::Bedrock,
        marker: r#""image":{"format":"png""#,
    },
];

fn png(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 256) as u8])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A home whose config points one provider of `kind` at `mock`, with the
/// model `pic-model` described by `model_lines`.
fn configure(home: &TestHome, kind: &str, mock: &MockModel, model: &str, model_lines: &str) {
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    let base = match kind {
        // Vertex and Bedrock name their own paths under the root.
        "bedrock" => format!("{}\nregion = \"eu-west-1\"", quoted(&mock.url())),
        _ => quoted(&mock.url()),
    };
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "provider = \"mine\"\n[providers.mine]\nkind = \"{kind}\"\nbase_url = {base}\n\
             api_key_env = \"MINE_KEY\"\nmodel = \"{model}\"\n[models.\"{model}\"]\n{model_lines}\n"
        ),
    )
    .unwrap();
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

async fn run(home: &TestHome, mock: &MockModel, args: &[&str]) -> (Output, String, String) {
    let mut vars = home.vars(&mock.url());
    vars.retain(|(k, _)| !k.starts_with("ANTHROPIC"));
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(vars)
        .env("MINE_KEY", "test-key")
        .env("AWS_ACCESS_KEY_ID", "AKIATEST")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

#[tokio::test]
async fn a_picture_by_flag_and_by_mention_reaches_every_wire_format() {
    let shot = png(64, 40);
    let data = b64(&shot);
    for wire in WIRES {
        for how in ["flag", "mention"] {
            let home = TestHome::new();
            std::fs::write(home.path("shot.png"), &shot).unwrap();
            let mock = MockModel::start(
                wire.format,
                vec![Reply::text("The button overlaps."), Reply::text("Title")],
            )
            .await;
            configure(&home, wire.kind, &mock, "pic-model", "images = true");
            let args: &[&str] = match how {
                "flag" => &["run", "-i", "shot.png", "what is wrong here?"],
                _ => &["run", "what is wrong in @shot.png?"],
            };
            let (out, stdout, stderr) = run(&home, &mock, args).await;
            let tag = format!("{} by {how}", wire.kind);
            assert!(out.status.success(), "{tag}: {stdout}\n{stderr}");
            assert!(stdout.contains("The button overlaps."), "{tag}: {stdout}");
            let first = mock.requests()[0].to_string();
            assert_eq!(first.matches(&data).count(), 1, "{tag}: {first:.600}");
            assert!(first.contains(wire.marker), "{tag}: {first:.600}");
            // The words go along, and the picture is not pasted in as text.
            assert!(first.contains("what is wrong"), "{tag}");
            assert!(!first.contains(r#"<attached path=\"shot.png"#), "{tag}");
        }
    }
}

#[tokio::test]
async fn a_text_only_model_refuses_a_picture_before_any_request() {
    let home = TestHome::new();
    std::fs::write(home.path("shot.png"), png(10, 10)).unwrap();
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text("never")]).await;
    configure(&home, "openai", &mock, "plain-model", "images = false");
    for args in [
        &["run", "-i", "shot.png", "look"][..],
        &["run", "look at @shot.png"][..],
    ] {
        let (out, _, stderr) = run(&home, &mock, args).await;
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("plain-model takes text only"), "{stderr}");
        assert!(stderr.contains("/model"), "{stderr}");
    }
    assert!(mock.requests().is_empty(), "{:?}", mock.requests());
}

#[tokio::test]
async fn a_large_picture_is_scaled_down_and_a_broken_one_is_refused_plainly() {
    let home = TestHome::new();
    std::fs::write(home.path("wide.png"), png(4000, 1000)).unwrap();
    std::fs::write(home.path("fake.png"), b"this is not a picture").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Wide."), Reply::text("T")],
    )
    .await;
    configure(&home, "anthropic", &mock, "claude-sonnet-4-5", "");
    let (out, _, stderr) = run(&home, &mock, &["run", "-i", "fake.png", "look"]).await;
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("-i fake.png: it is not a PNG, JPEG, GIF or WebP image"),
        "{stderr}"
    );
    let (out, _, stderr) = run(&home, &mock, &["run", "-i", "wide.png", "look"]).await;
    assert!(out.status.success(), "{stderr}");
    let req = &mock.requests()[0];
    let sent = req["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block")["source"]["data"]
        .as_str()
        .unwrap()
        .to_string();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(sent)
        .unwrap();
    let picture = image::load_from_memory(&bytes).unwrap();
    assert_eq!((picture.width(), picture.height()), (2000, 500));
}

/// Runs one prompt with `--effort high` (or the config's effort) against
/// `kind` and returns the first request.
async fn effort_request(
    kind: &str,
    format: Format,
    model: &str,
    lines: &str,
    args: &[&str],
) -> Value {
    let home = TestHome::new();
    let mock = MockModel::start(format, vec![Reply::text("ok"), Reply::text("T")]).await;
    configure(&home, kind, &mock, model, lines);
    let (out, stdout, stderr) = run(&home, &mock, args).await;
    assert!(out.status.success(), "{kind}: {stdout}\n{stderr}");
    mock.requests()[0].clone()
}

#[tokio::test]
async fn effort_high_reaches_each_format_in_its_own_field() {
    let reasoning = "reasoning = true\nmax_output = 64000";
    let args = ["run", "--effort", "high", "think hard"];
    let r = effort_request(
        "anthropic",
        Format::Anthropic,
        "claude-sonnet-4-5",
        "",
        &args,
    )
    .await;
    assert_eq!(r["thinking"]["budget_tokens"], 24_000, "{r}");
    let r = effort_request("openai", Format::OpenAi, "r-model", reasoning, &args).await;
    assert_eq!(r["reasoning_effort"], "high", "{r}");
    let r = effort_request(
        "openai-responses",
        Format::Responses,
        "r-model",
        reasoning,
        &args,
    )
    .await;
    assert_eq!(r["reasoning"]["effort"], "high", "{r}");
    let r = effort_request("gemini", Format::Gemini, "gemini-2.5-pro", reasoning, &args).await;
    assert_eq!(
        r["generationConfig"]["thinkingConfig"]["thinkingBudget"], 24_000,
        "{r}"
    );
    let r = effort_request(
        "gemini",
        Format::Gemini,
        "gemini-3-pro-preview",
        reasoning,
        &args,
    )
    .await;
    assert_eq!(
        r["generationConfig"]["thinkingConfig"]["thinkingLevel"], "high",
        "{r}"
    );
    let r = effort_request("ollama", Format::Ollama, "gpt-oss:20b", reasoning, &args).await;
    assert_eq!(r["think"], "high", "{r}");
    let r = effort_request(
        "bedrock",
        Format::Bedrock,
        "anthropic.claude-sonnet-4-5",
        reasoning,
        &args,
    )
    .await;
    assert_eq!(
        r["additionalModelRequestFields"]["thinking"]["budget_tokens"], 24_000,
        "{r}"
    );
    // Without a setting the formats keep their defaults.
    let r = effort_request(
        "openai-responses",
        Format::Responses,
        "r-model",
        reasoning,
        &["run", "hi"],
    )
    .await;
    assert_eq!(r["reasoning"]["effort"], "medium", "{r}");
    // A model's own `[models.ID] effort` applies, and `--effort` wins over it.
    let lines = "reasoning = true\neffort = \"low\"";
    let r = effort_request("openai", Format::OpenAi, "r-model", lines, &["run", "hi"]).await;
    assert_eq!(r["reasoning_effort"], "low", "{r}");
    let r = effort_request("openai", Format::OpenAi, "r-model", lines, &args).await;
    assert_eq!(r["reasoning_effort"], "high", "{r}");
}

#[tokio::test]
async fn effort_for_a_model_that_does_not_reason_is_ignored_with_one_notice() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text("ok"), Reply::text("T")]).await;
    configure(&home, "openai", &mock, "plain-model", "reasoning = false");
    let (out, _, stderr) = run(&home, &mock, &["run", "--effort", "xhigh", "hi"]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("Effort xhigh is ignored").count(),
        1,
        "{stderr}"
    );
    assert!(mock.requests()[0].get("reasoning_effort").is_none());
    let (out, _, stderr) = run(&home, &mock, &["run", "--effort", "huge", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("not an effort level"), "{stderr}");
}

#[tokio::test]
async fn a_session_exported_to_markdown_from_the_command_line_has_its_picture_beside_it() {
    let home = TestHome::new();
    std::fs::write(home.path("shot.png"), png(80, 50)).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("A chart."), Reply::text("T")],
    )
    .await;
    configure(&home, "anthropic", &mock, "claude-sonnet-4-5", "");
    let (out, _, stderr) = run(&home, &mock, &["run", "-i", "shot.png", "what is it?"]).await;
    assert!(out.status.success(), "{stderr}");
    let id = stderr
        .split_whitespace()
        .skip_while(|w| *w != "session")
        .nth(1)
        .expect("the session id on stderr")
        .to_string();
    let dir = home.home.path().join("exported");
    std::fs::create_dir_all(&dir).unwrap();
    let md = dir.join("s.md");
    let md_arg = md.display().to_string();
    let (out, _, stderr) = run(&home, &mock, &["sessions", "export", &id, "-o", &md_arg]).await;
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&md).unwrap();
    let link = text
        .split("](")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("a picture link in the Markdown");
    let picture = std::fs::read(dir.join(link)).expect("the linked picture beside the Markdown");
    assert_eq!(image::load_from_memory(&picture).unwrap().width(), 80);
}
