// Element-wise CKKS arithmetic: one dispatch covers every limb of every part, each word
// with its limb's prime; the operation is a run-time code (fhe_wgpu::ckks::eltwise::Op,
// the same numbers). Operands, word offsets and strides in `args`:
// - out, xs: `parts` parts of `limbs` limbs of N words, parts out_stride and x_stride
//   apart (x_stride 0 broadcasts one polynomial over the parts);
// - ys: limb l of a part reads ys[y_off + part y_stride + l N] while l < y_split, else
//   yhi[yhi_off + part y_stride + (l - y_split) N] (an extended plaintext's P limbs live
//   apart); y_stride 0 broadcasts one polynomial (a plaintext) over every part;
// - zs, index: a gather zs[z_off + part z_stride + l N + index[s]] (a Galois permutation);
// - sc: one scalar per limb from a_off (and b_off).
// No operand aliases `out` (wgpu binds it read-write alone): in-place forms read `out`.

const OP_COPY: u32 = 0u;
const OP_ADD: u32 = 1u;
const OP_SUB: u32 = 2u;
const OP_NEG: u32 = 3u;
const OP_MUL: u32 = 4u;
const OP_MUL_ADD: u32 = 5u;
const OP_ADD_TO: u32 = 6u;
const OP_SUB_FROM: u32 = 7u;
const OP_FILL: u32 = 8u;
const OP_AFFINE: u32 = 9u;
const OP_RESCALE: u32 = 10u;
const OP_TENSOR: u32 = 11u;
const OP_SUB_SCALE_ADD: u32 = 12u;
const OP_SUB_SCALE_PERM: u32 = 13u;
const OP_PERM_SCALE_ADD: u32 = 14u;
const OP_ZERO: u32 = 15u;
const OP_SUB_SCALE: u32 = 16u;
const OP_SCALE: u32 = 17u;

fn y_at(part: u32, l: u32, s: u32) -> u64 {
    let at = part * args.y_stride + s;
    if l < args.y_split {
        return ys[args.y_off + at + (l << args.log_n)];
    }
    return yhi[args.yhi_off + at + ((l - args.y_split) << args.log_n)];
}

fn z_at(part: u32, l: u32, s: u32) -> u64 {
    return zs[args.z_off + part * args.z_stride + (l << args.log_n) + index[s]];
}

@compute @workgroup_size(WG)
fn eltwise(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let n = n_words();
    let part_words = args.limbs * n;
    let total = args.parts * part_words;
    for (var w = gid.x; w < total; w += stride_of(groups)) {
        let part = w / part_words;
        let l = (w % part_words) >> args.log_n;
        let s = w & (n - 1u);
        let at = (l << args.log_n) + s;
        let r = record(l);
        let q = tables[r];
        let o = args.out_off + part * args.out_stride + at;
        let xi = args.x_off + part * args.x_stride + at;
        switch args.op {
            case OP_COPY: { out[o] = xs[xi]; }
            case OP_ADD: { out[o] = add_q(xs[xi], y_at(part, l, s), q); }
            case OP_SUB: { out[o] = sub_q(xs[xi], y_at(part, l, s), q); }
            case OP_NEG: { out[o] = sub_q(0lu, xs[xi], q); }
            case OP_MUL: { out[o] = mul_at(xs[xi], y_at(part, l, s), r); }
            case OP_MUL_ADD: { out[o] = add_q(out[o], mul_at(xs[xi], y_at(part, l, s), r), q); }
            case OP_ADD_TO: { out[o] = add_q(out[o], xs[xi], q); }
            case OP_SUB_FROM: { out[o] = sub_q(out[o], xs[xi], q); }
            case OP_FILL: { out[o] = sc[args.a_off + l]; }
            case OP_AFFINE: { out[o] = add_q(sc[args.a_off + l], mul_at(sc[args.b_off + l], y_at(part, l, s), r), q); }
            // Rescale's finish: out holds d, x the input: (x - d) q_l^-1.
            case OP_RESCALE: { out[o] = mul_at(sub_q(xs[xi], out[o], q), sc[args.a_off + l], r); }
            case OP_TENSOR: {
                // parts = 1: the word's three products, parts of out/x/y their strides apart.
                let x0 = xs[xi];
                let x1 = xs[xi + args.x_stride];
                let y0 = y_at(0u, l, s);
                let y1 = y_at(1u, l, s);
                out[o] = mul_at(x0, y0, r);
                out[o + args.out_stride] = add_q(mul_at(x0, y1, r), mul_at(x1, y0, r), q);
                out[o + 2u * args.out_stride] = mul_at(x1, y1, r);
            }
            case OP_SUB_SCALE_ADD: {
                out[o] = add_q(out[o], mul_at(sub_q(xs[xi], y_at(part, l, s), q), sc[args.a_off + l], r), q);
            }
            case OP_SUB_SCALE_PERM: {
                out[o] = add_q(z_at(part, l, s), mul_at(sub_q(xs[xi], y_at(part, l, s), q), sc[args.a_off + l], r), q);
            }
            case OP_PERM_SCALE_ADD: { out[o] = add_q(out[o], mul_at(z_at(part, l, s), sc[args.a_off + l], r), q); }
            case OP_ZERO: { out[o] = 0lu; }
            case OP_SUB_SCALE: { out[o] = mul_at(sub_q(xs[xi], y_at(part, l, s), q), sc[args.a_off + l], r); }
            case OP_SCALE: { out[o] = mul_at(xs[xi], sc[args.a_off + l], r); }
            default: {}
        }
    }
}
