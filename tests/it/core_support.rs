//! The core's test support (`crates/quire-core/tests/it/support.rs`, the
//! same file), and what the binary's tests add to it: command engines and
//! providers built from the configuration's types, as the launcher adapts
//! them.

use std::collections::BTreeMap;

use quire::config::schema::{CommandEngineConfig, EnginesConfig, ProviderConfig};
use quire_core::settings::{EngineInput, EngineOutput};

pub use crate::core_base::*;

/// A command engine that runs `argv` (no approval needed unless asked).
pub fn command_engine(
    argv: &[&str],
    input: EngineInput,
    output: EngineOutput,
    timeout_secs: u64,
) -> CommandEngineConfig {
    CommandEngineConfig {
        stage: "test".into(),
        description: String::new(),
        command: argv.iter().map(|s| (*s).to_owned()).collect(),
        input,
        output,
        timeout_secs: std::num::NonZeroU64::new(timeout_secs).unwrap(),
        max_output_bytes: std::num::NonZeroU64::new(64 << 20).unwrap(),
        requires_approval: false,
    }
}

/// A core with these command engines and translation providers, as the
/// launcher adapts them from the configuration.
pub fn with_engines(
    engines: EnginesConfig,
    providers: BTreeMap<String, ProviderConfig>,
) -> TestCore {
    TestCore::configured(|c| {
        c.commands = quire::launch::command_engines(&engines);
        c.allow_unattended = engines.allow_unattended;
        c.providers = providers
            .iter()
            .map(|(id, p)| (id.clone(), quire::launch::provider(p)))
            .collect();
    })
}
