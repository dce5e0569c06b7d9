//! Reads the docstrings of `python/bankfeed/_native.pyi`, the one place they are written, into
//! `stub_doc!("Client.investments")` for the binding's `#[doc = ...]` attributes, so that what
//! `help()` shows at run time is what an IDE shows from the stub
//! (docs/architecture.md#one-source-for-the-docstrings).
//!
//! The stub is read line by line, as it is written: `class Name` and `def name` at the start of a
//! line (a class) or after four spaces (a method, a property), the header up to the `:` that
//! closes its brackets, then a `"""` docstring if the body starts with one. Keys are `Class`,
//! `Class.method` and `function`; a class's text is its docstring followed by that of its
//! `__new__`, the constructor's, which Python shows nowhere else at run time. Each text is
//! cleaned as `inspect.cleandoc` cleans it, which is what `ast.get_docstring` and `help()` give.

use std::collections::BTreeMap;
use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

const STUB: &str = "python/bankfeed/_native.pyi";

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-changed={STUB}");
    let stub = std::fs::read_to_string(STUB)?;
    let docs = docstrings(&stub)?;
    let mut out = String::from(
        "// Written by build.rs from python/bankfeed/_native.pyi: edit the stub, not this.\n\
         macro_rules! stub_doc {\n",
    );
    for (key, text) in &docs {
        writeln!(out, "    ({key:?}) => {{ {text:?} }};")?;
    }
    out.push_str("}\n");
    let dir = std::env::var("OUT_DIR")?;
    std::fs::write(Path::new(&dir).join("stub_docs.rs"), out)?;
    Ok(())
}

/// Every docstring of the stub by the name it documents.
fn docstrings(stub: &str) -> Result<BTreeMap<String, String>, String> {
    let lines: Vec<&str> = stub.lines().collect();
    let mut docs: BTreeMap<String, String> = BTreeMap::new();
    let mut class: Option<String> = None;
    let mut at = 0;
    while let Some(line) = lines.get(at) {
        at += 1;
        let code = line.trim_start();
        let indent = line.len() - code.len();
        let (is_class, rest) = if let Some(rest) = code.strip_prefix("class ") {
            (true, rest)
        } else if let Some(rest) = code.strip_prefix("def ").or_else(|| code.strip_prefix("async def ")) {
            (false, rest)
        } else {
            if indent == 0 && !code.is_empty() && !code.starts_with('@') && !code.starts_with('#') {
                class = None;
            }
            continue;
        };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let key = match (indent, is_class, &class) {
            (0, true, _) => {
                class = Some(name.clone());
                name
            }
            (0, false, _) => {
                class = None;
                name
            }
            (4, false, Some(class)) => format!("{class}.{name}"),
            (4, false, None) => return Err(format!("{STUB}:{at}: a method outside a class")),
            // Nested deeper: nothing the binding defines.
            _ => continue,
        };
        // The header ends on the line where its brackets close.
        let mut depth = brackets(line);
        while depth > 0 {
            let next = lines.get(at).ok_or_else(|| format!("{STUB}:{at}: the header of {key} never closes"))?;
            depth += brackets(next);
            at += 1;
        }
        let Some(first) = lines.get(at).map(|line| line.trim_start()) else { break };
        let Some(opening) = first.strip_prefix("\"\"\"") else { continue };
        let mut text = String::new();
        let mut rest = opening;
        loop {
            if let Some(end) = rest.find("\"\"\"") {
                text.push_str(rest.get(..end).unwrap_or_default());
                break;
            }
            text.push_str(rest);
            text.push('\n');
            at += 1;
            rest = lines.get(at).ok_or_else(|| format!("{STUB}: the docstring of {key} never closes"))?;
        }
        at += 1;
        if text.contains('\\') {
            // Python would read an escape where this reader keeps the backslash.
            return Err(format!("{STUB}: the docstring of {key} holds a backslash; write it without one"));
        }
        let text = cleandoc(&text);
        match key.strip_suffix(".__new__") {
            // The constructor's text follows its class's (their order in the stub).
            Some(owner) => {
                let class_text = docs.get_mut(owner).ok_or_else(|| format!("{STUB}: {key} before its class"))?;
                class_text.push_str("\n\n");
                class_text.push_str(&text);
            }
            None => {
                docs.insert(key, text);
            }
        }
    }
    Ok(docs)
}

/// How many brackets `line` opens and does not close, outside its strings and its comment.
fn brackets(line: &str) -> i32 {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => break,
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// `inspect.cleandoc`: the first line without its leading spaces, the indentation common to the
/// others removed, blank lines at either end dropped.
fn cleandoc(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let margin = lines
        .iter()
        .skip(1)
        .filter(|line| !line.trim_start_matches(' ').is_empty())
        .map(|line| line.len() - line.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    let mut cleaned: Vec<&str> = Vec::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        cleaned.push(if index == 0 { line.trim_start_matches(' ') } else { line.get(margin..).unwrap_or("") });
    }
    while cleaned.last().is_some_and(|line| line.is_empty()) {
        cleaned.pop();
    }
    let start = cleaned.iter().position(|line| !line.is_empty()).unwrap_or(cleaned.len());
    cleaned.get(start..).unwrap_or_default().join("\n")
}
