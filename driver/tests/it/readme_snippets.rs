//! The README's Rust snippets are cut from the runnable examples: every ```rust block of
//! README.md must appear, line for line, in a file of `driver/examples/` (which
//! `cassandra_examples.rs` runs against Cassandra), so the README cannot show code that does
//! not build or does not work.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::Path;

/// The ```rust blocks of a Markdown text, each as its lines.
fn rust_blocks(markdown: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, fence) if fence.starts_with("```rust") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), _) => block.push(line.trim_end()),
            (None, _) => {}
        }
    }
    blocks
}

/// Whether `block`'s lines appear one after another in `text`.
fn contains_lines(text: &str, block: &[&str]) -> bool {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    !block.is_empty() && lines.windows(block.len()).any(|w| w == block)
}

#[test]
fn every_rust_snippet_of_the_readme_is_part_of_an_example() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples: Vec<(String, String)> = std::fs::read_dir(root.join("driver/examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    let blocks = rust_blocks(&readme);
    assert!(
        !blocks.is_empty(),
        "README.md has no ```rust block to check"
    );
    for block in blocks {
        assert!(
            examples
                .iter()
                .any(|(_, text)| contains_lines(text, &block)),
            "this README snippet is in no file of driver/examples/ ({}):\n{}",
            examples
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            block.join("\n")
        );
    }
}

#[test]
fn the_snippet_check_finds_blocks_and_tells_a_changed_line() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let md = "text\n```rust\nlet a = 1;\n    let b = 2;\n```\n```sh\nls\n```\n";
    let blocks = rust_blocks(md);
    assert_eq!(blocks, vec![vec!["let a = 1;", "    let b = 2;"]]);
    let source = "fn f() {\nlet a = 1;\n    let b = 2;\n}\n";
    assert!(contains_lines(source, &blocks[0]));
    assert!(!contains_lines("let a = 1;\n    let b = 3;\n", &blocks[0]));
    assert!(!contains_lines(source, &[]));
}
