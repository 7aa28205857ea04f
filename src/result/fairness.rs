//! The settings that change what a figure means: results that differ in one of them answer
//! different questions (`compare` refuses them; a disk's series keeps them apart).

use serde_json::Value;

/// The audio format (tracks), ring, chunk and block sizes, the period, the margin, the butler,
/// the profile and a simulated device. A key matches at any depth of a section's settings.
pub const KEYS: &[&str] = &[
    "format",
    "profile",
    "chunk_bytes",
    "buffer_s",
    "min_ring_chunks",
    "block_bytes",
    "seq_block",
    "random_block",
    "period_frames",
    "margin",
    "butler",
    "device_model",
];

/// Every such setting in `settings`, as (dotted path, key, value), in the settings' order.
pub fn settings(settings: &Value) -> Vec<(String, &str, &Value)> {
    let mut out = Vec::new();
    walk(settings, "", &mut out);
    out
}

fn walk<'a>(v: &'a Value, path: &str, out: &mut Vec<(String, &'a str, &'a Value)>) {
    if let Value::Object(map) = v {
        for (k, x) in map {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            match KEYS.iter().find(|key| **key == k.as_str()) {
                Some(key) => out.push((p, key, x)),
                None => walk(x, &p, out),
            }
        }
    }
}

/// The settings that matter as one string: two sections with the same fingerprint answer the
/// same question.
pub fn fingerprint(settings: &Value) -> String {
    self::settings(settings)
        .iter()
        .map(|(p, _, x)| format!("{p}={x}"))
        .collect::<Vec<_>>()
        .join(";")
}
