//! The QA rules' own tests.

use super::RuleLevel;
use super::*;
use quire_model::finding::Severity;
use quire_model::ids::{NodeId, PageId};
use quire_model::scene::{Node, Transform};

/// The text rules' findings (no subtitle limits past the defaults, no
/// speller).
fn check_page(page: &Page, sources: Option<&Sources>, levels: &QaLevels) -> Vec<Finding> {
    let limits = SubtitleSettings::default().limits(None);
    let context = Context {
        sources,
        limits: &limits,
        speller: None,
        measured: std::cell::OnceCell::new(),
    };
    check(page, &context, levels)
}

/// `[qa]` reads a key per rule and `subtitles`; a key no rule has is
/// refused with the keys there are; a rule not named keeps its default.
#[test]
fn the_levels_are_a_map_of_the_rules_keys() {
    let levels: QaLevels =
        toml::from_str("too_long = \"error\"\n[subtitles]\nprofile = \"netflix\"\n").unwrap();
    assert_eq!(levels.level("too-long"), RuleLevel::Error);
    assert_eq!(
        levels.level("placeholders"),
        RuleLevel::Error,
        "its default"
    );
    assert_eq!(levels.level("numbers"), RuleLevel::Warning);
    let wrong = toml::from_str::<QaLevels>("too_lng = \"error\"\n").unwrap_err();
    assert!(wrong.to_string().contains("too_long"), "{wrong}");
    let back: toml::Table = toml::from_str(&toml::to_string(&levels).unwrap()).unwrap();
    let keys: Vec<&str> = back.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), RULES.len() + 1, "{keys:?}");
    for rule in &RULES {
        assert_eq!(rule.key, rule.id.replace('-', "_"));
        assert!(keys.contains(&rule.key), "{keys:?}");
    }
}

fn node(text: &str, translation: Option<&str>, w: f64, h: f64) -> Node {
    let mut kind = NodeKind::source(Some(text.into()));
    if let NodeKind::Text { translation: t, .. } = &mut kind {
        *t = translation.map(Into::into);
    }
    Node {
        id: NodeId::new(),
        transform: Transform {
            x: 0.0,
            y: 0.0,
            width: w,
            height: h,
            rotation: None,
        },
        visible: true,
        kind,
    }
}

#[test]
fn reports_each_kind_of_problem() {
    let page = Page {
        id: PageId::new(),
        name: "p".into(),
        width: None,
        height: None,
        nodes: vec![
            node("Hello", None, 0.0, 0.0),
            node("Hi {0}", Some("Salut"), 0.0, 0.0),
            node(
                "Hi",
                Some("Une traduction beaucoup trop longue"),
                30.0,
                20.0,
            ),
            node("Hi ", Some("Salut"), 0.0, 0.0),
            node("Fine {0}", Some("Bien {0}"), 500.0, 100.0),
        ],
        document: None,
    };
    let problems = check_page(&page, None, &QaLevels::default());
    let rules: Vec<&str> = problems.iter().map(|p| p.rule.as_str()).collect();
    assert_eq!(
        rules,
        [
            "missing-translation",
            "placeholders",
            "too-long",
            "whitespace"
        ],
        "{problems:#?}"
    );
    for (p, node) in problems.iter().zip(&page.nodes) {
        assert_eq!((p.page_id, p.node_id), (Some(page.id), Some(node.id)));
        // The ids travel as fields; the message is for people.
        assert!(!p.message.contains(&node.id.to_string()), "{}", p.message);
    }
    assert!(problems[1].message.contains("[{0}]"));
    assert_eq!(problems[1].severity, Severity::Error);
}

fn page_of(nodes: Vec<Node>) -> Page {
    Page {
        id: PageId::new(),
        name: "p".into(),
        width: None,
        height: None,
        nodes,
        document: None,
    }
}

fn rules(page: &Page, sources: Option<&Sources>) -> Vec<String> {
    check_page(page, sources, &QaLevels::default())
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

#[test]
fn numbers_must_match_whatever_their_separators() {
    let bad = page_of(vec![node(
        "Wait 10 min for 1,000 pages",
        Some("Attendez 15 min pour 1 000 pages"),
        0.0,
        0.0,
    )]);
    assert_eq!(rules(&bad, None), ["numbers"]);
    let good = page_of(vec![node(
        "1,000 pages in 3.5 s",
        Some("1 000 pages en 3,5 s"),
        0.0,
        0.0,
    )]);
    assert!(
        rules(&good, None).is_empty(),
        "{:?}",
        check_page(&good, None, &QaLevels::default())
    );
    let wide = page_of(vec![node("第３話", Some("Episode 3"), 0.0, 0.0)]);
    assert!(rules(&wide, None).is_empty());
}

#[test]
fn a_question_stays_a_question() {
    let bad = page_of(vec![
        node("Are you there?", Some("Tu es là."), 0.0, 0.0),
        node("本当に！", Some("Vraiment"), 0.0, 0.0),
        node("Well...", Some("Bon."), 0.0, 0.0),
    ]);
    assert_eq!(rules(&bad, None), ["end-punctuation"; 3]);
    let good = page_of(vec![
        node("本当？", Some("Vraiment ?"), 0.0, 0.0),
        node("「行くぞ！」", Some("« On y va ! »"), 0.0, 0.0),
        node("Well…", Some("Bon..."), 0.0, 0.0),
        node("Fine.", Some("Bien"), 0.0, 0.0),
    ]);
    assert!(
        rules(&good, None).is_empty(),
        "{:?}",
        check_page(&good, None, &QaLevels::default())
    );
}

#[test]
fn the_same_source_translated_two_ways_is_inconsistent() {
    let one = page_of(vec![node("Yes", Some("Oui"), 0.0, 0.0)]);
    let two = page_of(vec![
        node("Yes", Some("Ouais"), 0.0, 0.0),
        node("No", Some("Non"), 0.0, 0.0),
    ]);
    let scene = Scene {
        project: Scene::new("p", "2026-12-01T00:00:00Z").project,
        pages: vec![
            std::sync::Arc::new(one.clone()),
            std::sync::Arc::new(two.clone()),
        ],
    };
    let sources = Sources::of(&scene);
    let found = check_page(&two, Some(&sources), &QaLevels::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, "inconsistent");
    assert_eq!(found[0].node_id, Some(two.nodes[0].id));
    assert!(
        found[0].message.contains("\"Oui\" on page 1"),
        "{}",
        found[0].message
    );
    // The same translation everywhere is fine.
    assert!(
        check_page(
            &one,
            Some(&Sources::of(&Scene {
                project: scene.project.clone(),
                pages: vec![std::sync::Arc::new(one.clone())],
            })),
            &QaLevels::default()
        )
        .is_empty()
    );
}

#[test]
fn a_glossary_term_must_be_translated_as_the_glossary_says() {
    let mut project = Scene::new("p", "2026-12-01T00:00:00Z").project;
    project.glossary = vec![quire_model::glossary::Term {
        source: "Shinigami".into(),
        target: "dieu de la mort".into(),
        note: None,
        case_sensitive: false,
    }];
    let page = page_of(vec![
        node("The shinigami laughs", Some("Le démon rit"), 0.0, 0.0),
        node("A Shinigami!", Some("Un Dieu de la mort !"), 0.0, 0.0),
        node("Shinigamis", Some("Des démons"), 0.0, 0.0),
    ]);
    let scene = Scene {
        project,
        pages: vec![std::sync::Arc::new(page.clone())],
    };
    let found = check_page(&page, Some(&Sources::of(&scene)), &QaLevels::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, "terminology");
    assert_eq!(found[0].node_id, Some(page.nodes[0].id));
    assert!(
        found[0].message.contains("\"dieu de la mort\""),
        "{}",
        found[0].message
    );
}

#[test]
fn each_rule_is_off_or_at_the_severity_configured() {
    let page = page_of(vec![
        node("Hello", None, 0.0, 0.0),
        node("Hi {0} 5?", Some("Salut 6"), 0.0, 0.0),
    ]);
    let mut levels = QaLevels::default();
    assert!(levels.set("missing-translation", RuleLevel::Off));
    assert!(levels.set("numbers", RuleLevel::Error));
    assert!(levels.set("end-punctuation", RuleLevel::Info));
    assert!(!levels.set("no-such-rule", RuleLevel::Info));
    let got: Vec<(String, Severity)> = check_page(&page, None, &levels)
        .into_iter()
        .map(|f| (f.rule, f.severity))
        .collect();
    assert_eq!(
        got,
        [
            ("placeholders".to_owned(), Severity::Error),
            ("numbers".to_owned(), Severity::Error),
            ("end-punctuation".to_owned(), Severity::Info),
        ]
    );
}

#[test]
fn capacity_grows_with_the_box() {
    assert_eq!(box_capacity(0.0, 100.0, 16.0), 0);
    assert!(box_capacity(200.0, 100.0, 16.0) > box_capacity(100.0, 100.0, 16.0));
}
