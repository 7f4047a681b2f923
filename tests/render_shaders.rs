//! naga validation of the demo's draw shaders (no GPU).

use naga::valid::{Capabilities, ValidationFlags, Validator};

fn validate(name: &str, src: &str) {
    let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
    Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
}

#[test]
fn render_and_normals_shaders_validate() {
    validate("render.wgsl", include_str!("../shaders/render.wgsl"));
    validate("normals.wgsl", include_str!("../shaders/normals.wgsl"));
}
