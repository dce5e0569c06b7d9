//! How values appear in messages and log lines: cut to a length, quoted and escaped, URLs without
//! what may be a secret. A leaf of the core: everything may use it, it uses nothing of the crate.

/// The first `max` characters of `text`, cut on a character boundary.
pub(crate) fn snippet(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// How many characters of a refused value a message shows.
pub(crate) const SHOWN_CHARS: usize = 40;

/// A refused value that is not a secret, for a message: quoted and escaped (`{:?}`, so a line
/// break shows as `\n`), its first [`SHOWN_CHARS`] characters and an ellipsis past them.
pub(crate) fn shown(value: &str) -> String {
    match value.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{:?}…", value.get(..end).unwrap_or(value)),
        None => format!("{value:?}"),
    }
}

/// A refused URL as a message shows it ([`shown`]), without what may be a secret: the user info
/// (`user:password@`, kept as `…@`), the query and the fragment (a token, say) are left out.
pub(crate) fn shown_url(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or_default();
    let after_scheme = without_query.find("://").map_or(0, |at| at + 3);
    let shown = match (without_query.rfind('@'), without_query.get(..after_scheme)) {
        (Some(at), Some(scheme)) if at >= after_scheme => {
            format!("{scheme}…{}", without_query.get(at..).unwrap_or_default())
        }
        _ => without_query.to_owned(),
    };
    self::shown(&shown)
}

/// How much of a body an error keeps.
const SNIPPET_CHARS: usize = 200;

/// The start of `bytes` as text, for an error message.
pub(crate) fn body_snippet(bytes: &[u8]) -> String {
    snippet(&String::from_utf8_lossy(bytes), SNIPPET_CHARS)
}

/// Seconds as a message shows them: to the millisecond under a second (a short `deadline` or
/// `poll_timeout` would otherwise read "after 0.0 s"), to the tenth above.
pub(crate) struct Seconds(pub std::time::Duration);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seconds = self.0.as_secs_f64();
        if seconds < 1.0 {
            write!(f, "{seconds:.3} s")
        } else {
            write!(f, "{seconds:.1} s")
        }
    }
}
