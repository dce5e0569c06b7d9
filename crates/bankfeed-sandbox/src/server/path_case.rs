//! A request path's case, as the operations' templates spell it: the service's routing ignores
//! case (docs/protocol.md#request-shapes-real-clients-send). A module of its own, used by the
//! router and by the replay server, so that neither imports the other.

/// `path` with the fixed segments of `template` in its case, if `path` matches it case aside
/// (a parameter `{...}` matches any non-empty segment).
pub(crate) fn spelled_as(template: &str, path: &str) -> Option<String> {
    let (wanted, given): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    if wanted.len() != given.len() {
        return None;
    }
    let mut canonical = Vec::with_capacity(given.len());
    for (wanted, given) in wanted.iter().zip(&given) {
        if wanted.starts_with('{') {
            if given.is_empty() {
                return None;
            }
            canonical.push(*given);
        } else if wanted.eq_ignore_ascii_case(given) {
            canonical.push(*wanted);
        } else {
            return None;
        }
    }
    Some(canonical.join("/"))
}
