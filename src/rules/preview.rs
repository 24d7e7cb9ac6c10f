//! Preview channel: `preview.version` format and the preview distribution's pins.

use super::distribution::check_distribution;
use super::entry::ManifestDoc;
use super::sink::Sink;
use super::versions::PreviewVersion;
use crate::diagnostics::Code;

pub(crate) fn check(doc: &ManifestDoc, sink: &mut Sink) {
    let Some(preview) = doc.root.get("preview") else {
        return;
    };
    let version = preview.get_str("version");
    let valid = version.filter(|v| PreviewVersion::parse(v).is_some());
    if let (Some(text), None) = (version, valid) {
        sink.push(
            doc.at(
                Code::PreviewVersion,
                "/preview/version",
                format!("preview version `{text}` is neither `X.Y.Z` nor `X.Y.Z-preview.N`"),
            )
            .help("use e.g. `1.5.0-preview.1` (N starts at 1, no leading zero)"),
        );
    }
    if let Some(dist) = preview.get("distribution") {
        check_distribution(doc, dist, "/preview/distribution", valid, sink);
    }
}
