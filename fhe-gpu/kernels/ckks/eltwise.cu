// Element-wise CKKS arithmetic (LuxCkksEltwiseArgs): one launch covers every limb of
// every part of a ciphertext, each word with its limb's prime. The operation is a
// run-time code (fhe_gpu::args::EltwiseOp, the same numbers): the host composes
// additions, products, constants, rescale and ModDown finishes from these few forms, so
// one kernel and one argument struct serve them all. Operands:
// - out, x: `parts` parts of `limbs` limbs of N words, parts out_stride and x_stride
//   words apart (a ciphertext's parts, or an extended polynomial's first limbs);
// - y: limb l of a part reads y + part * y_stride + l N while l < y_split, else
//   y_hi + part * y_stride + (l - y_split) N (an extended plaintext's P limbs live apart);
//   y_stride 0 broadcasts one polynomial (a plaintext) over every part;
// - z, index: a gather z[part * z_stride + l N + index[s]] (a Galois permutation);
// - a, b: one scalar per limb.

#define LUX_OP_COPY 0
#define LUX_OP_ADD 1
#define LUX_OP_SUB 2
#define LUX_OP_NEG 3
#define LUX_OP_MUL 4
#define LUX_OP_MUL_ADD 5
#define LUX_OP_ADD_TO 6
#define LUX_OP_SUB_FROM 7
#define LUX_OP_SCALE 8
#define LUX_OP_AFFINE 9
#define LUX_OP_SUB_SCALE 10
#define LUX_OP_SUB_SCALE_ADD 11
#define LUX_OP_SUB_SCALE_PERM 12
#define LUX_OP_PERM_SCALE_ADD 13
#define LUX_OP_ZERO 14
#define LUX_OP_FILL 15
#define LUX_OP_TENSOR 16

LUX_KERNEL(lux_ckks_eltwise)(LuxCkksEltwiseArgs args) {
    const u32 log_n = args.log_n;
    const u64 n_mask = (1ull << log_n) - 1;
    const u64 part_words = (u64)args.limbs << log_n;
    const u64 total = (u64)args.parts * part_words;
    LUX_FOR_WORDS(w, total) {
        const u32 part = (u32)(w / part_words);
        const u32 l = lux_limb_of(w, log_n, args.limbs);
        const u64 s = w & n_mask;
        const u64 at = ((u64)l << log_n) + s;
        const LuxModulus m = args.tables[l].modulus;
        const u64 q = m.q;
        const u64 y_at = (u64)part * args.y_stride + s;
        const lux_w* y = args.y == 0 ? 0
                         : l < args.y_split ? args.y + y_at + ((u64)l << log_n)
                                            : args.y_hi + y_at + ((u64)(l - args.y_split) << log_n);
        const lux_w x = args.x == 0 ? 0 : args.x[(u64)part * args.x_stride + at];
        lux_w* o = args.out + (u64)part * args.out_stride + at;
        switch (args.op) {
            case LUX_OP_COPY: *o = x; break;
            case LUX_OP_ADD: *o = lux_add(x, *y, q); break;
            case LUX_OP_SUB: *o = lux_sub(x, *y, q); break;
            case LUX_OP_NEG: *o = lux_sub(0, x, q); break;
            case LUX_OP_MUL: *o = lux_mul(x, *y, m); break;
            case LUX_OP_MUL_ADD: *o = lux_add(*o, lux_mul(x, *y, m), q); break;
            case LUX_OP_ADD_TO: *o = lux_add(*o, x, q); break;
            case LUX_OP_SUB_FROM: *o = lux_sub(*o, x, q); break;
            case LUX_OP_SCALE: *o = lux_mul(x, args.a[l], m); break;
            case LUX_OP_AFFINE: *o = lux_add(args.a[l], lux_mul(args.b[l], *y, m), q); break;
            case LUX_OP_SUB_SCALE: *o = lux_mul(lux_sub(x, *y, q), args.a[l], m); break;
            case LUX_OP_SUB_SCALE_ADD: *o = lux_add(*o, lux_mul(lux_sub(x, *y, q), args.a[l], m), q); break;
            case LUX_OP_SUB_SCALE_PERM: {
                const lux_w zi = args.z[(u64)part * args.z_stride + ((u64)l << log_n) + args.index[s]];
                *o = lux_add(zi, lux_mul(lux_sub(x, *y, q), args.a[l], m), q);
                break;
            }
            case LUX_OP_PERM_SCALE_ADD: {
                const lux_w zi = args.z[(u64)part * args.z_stride + ((u64)l << log_n) + args.index[s]];
                *o = lux_add(*o, lux_mul(zi, args.a[l], m), q);
                break;
            }
            case LUX_OP_ZERO: *o = 0; break;
            case LUX_OP_FILL: *o = args.a[l]; break;
            case LUX_OP_TENSOR: {
                // parts = 1: the word's three products, parts of out/x/y their strides apart.
                const lux_w x1 = args.x[args.x_stride + at], y0 = *y, y1 = y[args.y_stride];
                o[0] = lux_mul(x, y0, m);
                o[args.out_stride] = lux_add(lux_mul(x, y1, m), lux_mul(x1, y0, m), q);
                o[2 * args.out_stride] = lux_mul(x1, y1, m);
                break;
            }
            default: break;  // the host sends only fhe_gpu::args::EltwiseOp codes
        }
    }
}
