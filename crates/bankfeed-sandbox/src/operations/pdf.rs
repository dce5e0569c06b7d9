//! A minimal one-page PDF, written by hand: enough for a viewer (and a parser checking the
//! cross-reference table) to open a statement, without a PDF crate.

/// A PDF 1.4 document with one Letter page showing `lines` in Helvetica, one under the other.
/// The cross-reference table holds the exact byte offset of every object.
pub(crate) fn one_page(lines: &[String]) -> Vec<u8> {
    let mut text = String::from("BT /F1 12 Tf 72 720 Td 16 TL");
    for line in lines {
        text.push_str(&format!(" ({}) '", escape(line)));
    }
    text.push_str(" ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
         /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
            .to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{text}\nendstream", text.len()),
    ];
    // The binary comment line tells transfer tools the file is not plain text.
    let mut pdf: Vec<u8> = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (index, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", index + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n", objects.len() + 1).as_bytes());
    // Every entry is exactly 20 bytes, the line end included.
    pdf.extend_from_slice(b"0000000000 65535 f \n");
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF", objects.len() + 1).as_bytes(),
    );
    pdf
}

/// Text in a PDF string literal: backslash and parentheses are escaped, and anything outside
/// printable ASCII is replaced, since the font is addressed in single bytes.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '(' | ')' => {
                escaped.push('\\');
                escaped.push(c);
            }
            ' '..='~' => escaped.push(c),
            _ => escaped.push('?'),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_point_at_their_objects() {
        let pdf = one_page(&["Account (1234)".to_owned()]);
        let text = String::from_utf8_lossy(&pdf);
        assert!(pdf.starts_with(b"%PDF-1.4") && pdf.ends_with(b"%%EOF"));
        let start: usize = text.rsplit("startxref\n").next().unwrap().lines().next().unwrap().parse().unwrap();
        assert!(pdf[start..].starts_with(b"xref\n0 6\n"));
        let entries = &pdf[start + 9..start + 9 + 6 * 20];
        for (index, entry) in entries.chunks(20).enumerate().skip(1) {
            let offset: usize = std::str::from_utf8(&entry[..10]).unwrap().parse().unwrap();
            assert!(pdf[offset..].starts_with(format!("{index} 0 obj").as_bytes()));
        }
        assert!(text.contains("(Account \\(1234\\)) '"));
    }
}
