//! The configuration as the core runs it: a provider whose key the
//! configuration could not resolve, adapted by the launcher
//! (`launch::provider`), refuses only the pipelines that use it.

use std::collections::BTreeMap;

use quire::config::secret::Secret;
use quire_core::jobs::{Approval, PipelineSpec};

use crate::core_base::{Engines, with_engines};

#[tokio::test]
async fn a_provider_whose_key_variable_is_unset_refuses_only_its_pipeline() {
    let api_key = quire::config::secret::resolve(
        "providers.fake.api_key",
        &Secret::default(),
        Some("QUIRE_LLM_KEY_SURELY_UNSET"),
        None,
    )
    .unwrap();
    let p = quire::config::schema::ProviderConfig {
        base_url: "http://127.0.0.1:9/ok/v1".into(),
        model: "fake-model".into(),
        api_key,
        api_key_env: None,
        api_key_file: None,
        timeout_secs: std::num::NonZeroU64::new(5).unwrap(),
        max_retries: 0,
        max_in_flight: 4,
        images: false,
    };
    let providers = BTreeMap::from([("fake".to_owned(), quire::launch::provider(&p))]);
    let t = with_engines(Engines::default(), providers);
    let id = t.session("No key");
    t.core.import_text(id, "one", "Hello", None).await.unwrap();
    let spec = |step: &str| PipelineSpec {
        steps: vec![step.into()],
        target_language: Some("fr".into()),
        ..PipelineSpec::default()
    };
    let err = t
        .core
        .start_pipeline(id, spec("llm-translate"), Approval::Unattended)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    let message = err.to_string();
    assert!(
        message.contains("provider `fake`")
            && message.contains("QUIRE_LLM_KEY_SURELY_UNSET is not set"),
        "{message}"
    );
    assert!(t.core.jobs().is_empty(), "no job was started");
    // Other engines are not affected.
    t.core
        .start_pipeline(id, spec("pseudo-translate"), Approval::Unattended)
        .await
        .unwrap();
}
