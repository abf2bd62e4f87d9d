//! The site rules ([`crate::boundary::program`]) written out as WGSL: one function per rule
//! kind a shader needs, `rule_<code>(g, o, links)`, its record's values at `consts[o + k]` and
//! its link set in `links` (a program keeps only the instructions whose results reach an
//! output).

use super::shader::lit;
use crate::boundary::program::{Op, Program};
use crate::Model;

/// The WGSL function `name` of `program` for model `M`.
pub(super) fn function<M: Model>(program: &Program, name: &str) -> String {
    let q = M::Q;
    let mut s =
        format!("fn {name}(g: array<real, {q}>, o: u32, links: u32) -> array<real, {q}> {{\n");
    let mut feq = false;
    for (r, op) in program.ops.iter().enumerate() {
        let e = match *op {
            Op::Pop(i) => format!("g[{i}]"),
            Op::Value(k) => format!("consts[o + {k}u]"),
            Op::Const(c) => lit(c),
            Op::Add(a, b) => format!("r{a} + r{b}"),
            Op::Sub(a, b) => format!("r{a} - r{b}"),
            Op::Mul(a, b) => format!("r{a} * r{b}"),
            Op::Div(a, b) => format!("r{a} / r{b}"),
            Op::Feq(i) => {
                if !feq {
                    let m: Vec<String> = program.moments.iter().map(|m| format!("r{m}")).collect();
                    s += &format!(
                        "    let feq = lbm_equilibrium(array<real, {}>({}), params());\n",
                        m.len(),
                        m.join(", ")
                    );
                    feq = true;
                }
                format!("feq[{i}]")
            }
            Op::IfLink(i, a, b) => format!("select(r{b}, r{a}, ((links >> {i}u) & 1u) != 0u)"),
        };
        s += &format!("    let r{r} = {e};\n");
    }
    s += "    var h = g;\n";
    for (i, r) in &program.out {
        s += &format!("    h[{i}] = r{r};\n");
    }
    s + "    return h;\n}\n"
}
