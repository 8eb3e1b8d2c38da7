//! MCP interop with the official TypeScript SDK client (what Claude
//! Desktop, Claude Code, Cursor and VS Code build on) over stdio and
//! `/mcp`, and the conversion of every tool schema for OpenAI's strict
//! mode and Gemini (`tests/mcp_interop/schemas.py`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{BIN, Sandbox, missing_program, tool_available};
use crate::http_support::Binary;

const TS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_ts");

/// Node with the SDK that scripts/test installed into tests/mcp_ts, or
/// `None` when it is missing and the machine opted out
/// (`ALLOW_MISSING_TOOLS=mcp-ts-sdk`).
fn node_or_skip(test: &str) -> bool {
    let missing = missing_program("node", "--version").or_else(|| {
        let sdk = Path::new(TS_DIR).join("node_modules/@modelcontextprotocol/sdk/package.json");
        (!sdk.exists()).then(|| {
            format!(
                "{} is missing (./scripts/test runs `npm ci` in tests/mcp_ts)",
                sdk.display()
            )
        })
    });
    tool_available("mcp-ts-sdk", test, missing)
}

fn interop(sandbox: &Sandbox, args: &[&str]) {
    let out = sandbox
        .isolate(
            Command::new("node")
                .arg(Path::new(TS_DIR).join("interop.mjs"))
                .args(args),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "TypeScript interop {args:?} failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(": ok"), "{stdout}");
}

#[test]
fn typescript_sdk_over_stdio() {
    if !node_or_skip("typescript_sdk_over_stdio") {
        return;
    }
    interop(&Sandbox::new(), &["stdio", BIN]);
}

#[test]
fn typescript_sdk_over_http() {
    if !node_or_skip("typescript_sdk_over_http") {
        return;
    }
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    interop(&s, &["http", &format!("{}/mcp", server.url)]);
    assert!(server.terminate().success());
}

/// The Python that has `openai-agents` and `google-genai` (scripts/test
/// installs them into .venv beside the MCP SDK).
fn providers_python(test: &str) -> Option<PathBuf> {
    let python = crate::mcp::python_or_skip(test)?;
    let ok = Command::new(&python)
        .args(["-c", "import agents.strict_schema, google.genai"])
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = (!ok).then(|| {
        format!(
            "{} lacks openai-agents or google-genai (./scripts/test installs them)",
            python.display()
        )
    });
    tool_available("mcp-sdk", test, missing).then_some(python)
}

#[test]
fn every_tool_schema_converts_for_openai_strict_and_gemini_and_the_list_is_small() {
    let Some(python) = providers_python("every_tool_schema_converts") else {
        return;
    };
    let s = Sandbox::new();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_interop/schemas.py");
    let out = s
        .isolate(Command::new(python).arg(script).arg(BIN))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("schemas: ok"), "{stdout}");
    let bytes: usize = stdout
        .split("tools, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the size line");
    assert!(
        bytes < 16 * 1024,
        "tools/list is {bytes} bytes (limit 16 KiB)"
    );
}
