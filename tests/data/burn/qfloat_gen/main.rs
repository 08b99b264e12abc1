//! Writes `qfloat.bpk` (burn-quantized tensors) and `qfloat_expected.bpk` (the F32 values burn
//! dequantizes them to), for checkpoint-inspector's tests.
//!
//! burn could not be built where this was written (no crate registry), so this program carries
//! burn's own code, transcribed function by function with no dependency, from burn commit
//! 2c06be351 (0.22.0-pre.2) and cubecl rev 48348968 (the versions the reader targets):
//!
//! * `QuantizedBytes::new`, `quantized_data_len`, `storage_elements`, `params_shape`,
//!   `BlockLayout::block_of`, `encode_scales`/`decode_scales`, `unpack_q_to_i8s`:
//!   burn-std/src/tensor/quantization.rs
//! * `SymmetricQuantization` (`init`, `valid_scale`, `quantize_one`, `dequantize_one`) and
//!   `QuantizationStrategy`: burn-ndarray/src/ops/quantization.rs; `NdArrayQTensor::strategy`
//!   (global × block scale): burn-ndarray/src/tensor.rs; `quantize`/`dequantize`:
//!   burn-ndarray/src/ops/qtensor.rs
//! * `ScaleDtype::round_up` and `QuantValue::range`: cubecl-common/src/quant/scheme.rs
//! * E4M3 -> f16: the float8 crate's `convert_fp8_to_fp16` (which cubecl's `e4m3` wraps)
//! * the CBOR: serde's derive of `DType::QFloat(QuantScheme)` and burn-pack's `Metadata` as
//!   ciborium writes them; the layout: burn-pack/src/writer.rs (256-byte alignment).
//!
//! Build and run (no crates): `rustc -O main.rs -o /tmp/qfloat_gen && /tmp/qfloat_gen OUT_DIR`.
//! Every value is computed in f32 as burn computes it; the dequantization reads the bytes back
//! through the same decode path as burn's `q_from_data` + `dequantize`, not from the floats the
//! quantizer held.

use std::fs;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Value { Q8F, Q8S, Q4S, Q4F, Q2S }
#[derive(Clone, Copy, PartialEq, Debug)]
enum Store { Native, PackedU32 }
#[derive(Clone, Copy, PartialEq, Debug)]
enum Sd { F32, F16, BF16, UE4M3 }

#[derive(Clone, Copy)]
struct Scheme {
    value: Value,
    store: Store,
    tensor: Option<Sd>,
    block: Option<([u8; 5], u8, Sd)>,
}

impl Value {
    fn name(self) -> &'static str {
        match self { Value::Q8F => "Q8F", Value::Q8S => "Q8S", Value::Q4S => "Q4S", Value::Q4F => "Q4F", Value::Q2S => "Q2S" }
    }
    fn size_bits(self) -> usize {
        match self { Value::Q8F | Value::Q8S => 8, Value::Q4S | Value::Q4F => 4, Value::Q2S => 2 }
    }
    // QuantValue::range
    fn range(self) -> (f32, f32) {
        match self {
            Value::Q8F => (i8::MIN as f32, i8::MAX as f32),
            Value::Q4F => (-8.0, 7.0),
            Value::Q8S => (-i8::MAX as f32, i8::MAX as f32),
            Value::Q4S => (-7.0, 7.0),
            Value::Q2S => (-1.0, 1.0),
        }
    }
}

impl Sd {
    fn name(self) -> &'static str {
        match self { Sd::F32 => "F32", Sd::F16 => "F16", Sd::BF16 => "BF16", Sd::UE4M3 => "UE4M3" }
    }
    // scale_size
    fn size(self) -> usize {
        match self { Sd::F32 => 4, Sd::F16 | Sd::BF16 => 2, Sd::UE4M3 => 1 }
    }
    fn max_representable(self) -> f32 {
        match self { Sd::F32 => f32::MAX, Sd::F16 => 65504.0, Sd::BF16 => f32::from_bits(0x7F7F_0000), Sd::UE4M3 => 448.0 }
    }
    // ScaleDtype::round_up (cubecl-common scheme.rs)
    fn round_up(self, scale: f32) -> f32 {
        if self == Sd::F32 || scale.is_nan() { return scale; }
        let max = self.max_representable();
        if scale >= max { return max; }
        let (bit_step, sub): (u32, Option<(f32, f32)>) = match self {
            Sd::F16 => (1 << (24 - 11), Some((6.103515625e-5, 5.960464477539063e-8))),
            Sd::BF16 => (1 << (24 - 8), None),
            Sd::UE4M3 => (1 << (24 - 4), Some((0.015625, 0.001953125))),
            Sd::F32 => unreachable!(),
        };
        if let Some((min_normal, spacing)) = sub {
            if scale < min_normal { return (scale / spacing).ceil() * spacing; }
        }
        f32::from_bits((scale.to_bits() + (bit_step - 1)) & !(bit_step - 1))
    }
}

impl Scheme {
    fn scale_dtype(&self) -> Sd {
        self.block.map(|b| b.2).or(self.tensor).unwrap_or(Sd::F32)
    }
    fn global_dtype(&self) -> Option<Sd> {
        self.block.and(self.tensor)
    }
    fn block_size(&self) -> Option<Vec<u8>> {
        self.block.map(|(s, len, _)| s[..len as usize].to_vec())
    }
    fn stored_bits(&self) -> usize {
        match self.store { Store::Native => self.value.size_bits(), Store::PackedU32 => 32 }
    }
    fn num_quants(&self) -> usize {
        self.stored_bits() / self.value.size_bits()
    }
}

// BlockSize::to_dim_vec
fn to_dim_vec(block: &[u8], len: usize) -> Vec<u8> {
    let data_len = len.min(block.len());
    let data_start = len - data_len;
    let mut out = vec![1; len];
    out[data_start..].copy_from_slice(&block[..data_len]);
    out
}

// params_shape / BlockSize::num_blocks
fn num_blocks(shape: &[usize], scheme: &Scheme) -> Vec<usize> {
    match scheme.block_size() {
        None => vec![1],
        Some(b) => to_dim_vec(&b, shape.len()).into_iter().zip(shape).map(|(b, &d)| d.div_ceil(b as usize)).collect(),
    }
}

// BlockLayout::block_of
fn block_of(shape: &[usize], block: &[u8], blocks: &[usize], mut index: usize) -> usize {
    let block = to_dim_vec(block, shape.len());
    let mut out = 0;
    let mut stride = 1;
    for dim in (0..shape.len()).rev() {
        let coordinate = index % shape[dim];
        index /= shape[dim];
        out += coordinate / block[dim] as usize * stride;
        stride *= blocks[dim];
    }
    out
}

// storage_elements + quantized_data_len
fn quantized_data_len(scheme: &Scheme, shape: &[usize]) -> usize {
    let nq = scheme.num_quants();
    let units = if scheme.store == Store::PackedU32 && nq > 1 && !shape.is_empty() {
        let mut s = shape.to_vec();
        let pd = s.len() - 1;
        s[pd] = s[pd].div_ceil(nq);
        s.iter().product()
    } else {
        shape.iter().product::<usize>().div_ceil(nq)
    };
    let params: usize = num_blocks(shape, scheme).iter().product();
    units * scheme.stored_bits().div_ceil(8) + params * scheme.scale_dtype().size()
        + scheme.global_dtype().map_or(0, |d| d.size())
}

// --- f16 / bf16 / e4m3 (half and float8's conversions) ----------------------------------------

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    if exp == 0x1f {
        return f32::from_bits(sign | 0x7f80_0000 | (man << 13));
    }
    if exp == 0 {
        if man == 0 { return f32::from_bits(sign); }
        let v = man as f32 * 5.960464477539063e-8; // man × 2^-24, exact
        return if sign != 0 { -v } else { v };
    }
    f32::from_bits(sign | ((exp + 112) << 23) | (man << 13))
}

fn f32_to_f16(x: f32) -> u16 {
    // only called with values already on the f16 grid (round_up put them there): exact
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let a = x.abs();
    if a == 0.0 { return sign; }
    if a < 6.103515625e-5 {
        return sign | (a / 5.960464477539063e-8) as u16;
    }
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    sign | ((exp as u16) << 10) | (((bits >> 13) & 0x3ff) as u16)
}

// float8's convert_fp8_to_fp16 (E4M3)
fn e4m3_to_f16(x: u8) -> u16 {
    let ur = (x as u16) << 8;
    let sign = ur & 0x8000;
    let mut exponent = ((ur & 0x7800) >> 1).wrapping_add(0x2000);
    let mut mantissa = (ur & 0x0700) >> 1;
    let absx = 0x7f & x;
    if absx == 0x7f {
        return 0x7fff;
    }
    if exponent == 0x2000 {
        if mantissa != 0 {
            mantissa <<= 1;
            while (mantissa & 0x0400) == 0 {
                mantissa <<= 1;
                exponent = exponent.wrapping_sub(0x0400);
            }
            mantissa &= 0x03ff;
        } else {
            exponent = 0;
        }
    }
    sign | exponent | mantissa
}

fn f32_to_e4m3(x: f32) -> u8 {
    // values on the e4m3 grid only (round_up put them there): search the 127 positive codes
    (0u8..0x7f).find(|&b| f16_to_f32(e4m3_to_f16(b)) == x).expect("not an e4m3 value")
}

// encode_scales / decode_scales (little-endian: x86)
fn encode_scales(scales: &[f32], dtype: Sd) -> Vec<u8> {
    match dtype {
        Sd::F32 => scales.iter().flat_map(|s| s.to_le_bytes()).collect(),
        Sd::F16 => scales.iter().flat_map(|s| f32_to_f16(*s).to_le_bytes()).collect(),
        Sd::BF16 => scales.iter().flat_map(|s| ((s.to_bits() >> 16) as u16).to_le_bytes()).collect(),
        Sd::UE4M3 => scales.iter().map(|s| f32_to_e4m3(*s)).collect(),
    }
}

fn decode_scales(bytes: &[u8], dtype: Sd) -> Vec<f32> {
    match dtype {
        Sd::F32 => bytes.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        Sd::F16 => bytes.chunks(2).map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]]))).collect(),
        Sd::BF16 => bytes.chunks(2).map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16)).collect(),
        Sd::UE4M3 => bytes.iter().map(|b| f16_to_f32(e4m3_to_f16(*b))).collect(),
    }
}

// --- SymmetricQuantization (burn-ndarray) --------------------------------------------------------

fn valid_scale(scale: f32) -> f32 {
    if scale == 0.0 { 0.1 } else { scale }
}

fn quantize_one(value: f32, scale: f32, v: Value) -> i8 {
    let (a, b) = v.range();
    (value / scale).round().clamp(a, b) as i8
}

// --- the tensor bytes: QuantizedBytes::new, with packing for the u32 store --------------------------

fn pack_u32(values: &[i8], bits: usize, cols: usize) -> Vec<u8> {
    // inverse of unpack_q_to_i8s, per row of `cols` values (cols is a multiple of 32 / bits)
    let per = 32 / bits;
    let mask = (1u32 << bits) - 1;
    let mut out = Vec::new();
    for row in values.chunks(cols) {
        for word in row.chunks(per) {
            let mut w = 0u32;
            for (i, &q) in word.iter().enumerate() {
                w |= ((q as u8 as u32) & mask) << (i * bits);
            }
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out
}

fn unpack_q_to_i8s(words: &[u32], numel: usize, bits: usize) -> Vec<i8> {
    let num_quants = 32 / bits;
    let mask = (1u32 << bits) - 1;
    let sign_shift = 8 - bits;
    words.iter().enumerate().flat_map(|(i, &packed)| {
        let n = core::cmp::min(num_quants, numel - i * num_quants);
        (0..n).map(move |i| {
            let raw = ((packed >> (i * bits)) & mask) as u8;
            ((raw << sign_shift) as i8) >> sign_shift
        })
    }).collect()
}

/// Quantize `data` as burn's ndarray `quantize` does, given the calibrated scales (min-max:
/// `(alpha + alpha) / (b - a)`, then `scale_to_dtype`); returns the tensor's bytes.
fn quantize(data: &[f32], shape: &[usize], scheme: &Scheme) -> Vec<u8> {
    let (a, b) = scheme.value.range();
    let blocks = num_blocks(shape, scheme);
    let n_blocks: usize = blocks.iter().product();
    let block = scheme.block_size().unwrap_or_else(|| shape.iter().map(|&d| d.max(1) as u8).collect());
    let mut absmax = vec![0f32; n_blocks];
    for (i, x) in data.iter().enumerate() {
        let k = if scheme.block.is_some() { block_of(shape, &block, &blocks, i) } else { 0 };
        absmax[k] = absmax[k].max(x.abs());
    }
    let raw_scales: Vec<f32> = absmax.iter().map(|&al| (al + al) / (b - a)).collect();
    let (scales, global) = match scheme.global_dtype() {
        None => (raw_scales.iter().map(|&s| scheme.scale_dtype().round_up(s)).collect::<Vec<_>>(), None),
        Some(gd) => {
            // two-level: the per-tensor scale puts the largest block scale at the block dtype's max
            let top = raw_scales.iter().cloned().fold(0f32, f32::max);
            let g = gd.round_up(top / scheme.scale_dtype().max_representable());
            (raw_scales.iter().map(|&s| scheme.scale_dtype().round_up(s / g)).collect(), Some(g))
        }
    };
    let mult = global.unwrap_or(1.0);
    let values: Vec<i8> = data.iter().enumerate().map(|(i, &x)| {
        let k = if scheme.block.is_some() { block_of(shape, &block, &blocks, i) } else { 0 };
        quantize_one(x, valid_scale(mult * scales[k]), scheme.value)
    }).collect();
    let mut bytes = match scheme.store {
        Store::Native => values.iter().map(|&q| q as u8).collect::<Vec<u8>>(),
        Store::PackedU32 => pack_u32(&values, scheme.value.size_bits(), *shape.last().unwrap()),
    };
    bytes.extend(encode_scales(&scales, scheme.scale_dtype()));
    if let Some(g) = global {
        bytes.extend(encode_scales(&[g], Sd::F32));
    }
    assert_eq!(bytes.len(), quantized_data_len(scheme, shape));
    bytes
}

/// What burn's ndarray backend computes from the bytes: `q_from_data` (`into_vec_i8`) then
/// `dequantize` (`strategy.dequantize`, `valid_scale(global × block scale) × code`).
fn dequantize(bytes: &[u8], shape: &[usize], scheme: &Scheme) -> Vec<f32> {
    let numel: usize = shape.iter().product();
    let blocks = num_blocks(shape, scheme);
    let num_params: usize = blocks.iter().product();
    let global_bytes = scheme.global_dtype().map_or(0, |d| d.size());
    let scale_bytes = scheme.scale_dtype().size() * num_params + global_bytes;
    let split = bytes.len() - scale_bytes;
    let (vals, qparams) = bytes.split_at(split);
    let block_end = qparams.len() - global_bytes;
    let block_scales = decode_scales(&qparams[..block_end], scheme.scale_dtype());
    let global = scheme.global_dtype().map(|d| decode_scales(&qparams[block_end..], d)[0]);
    let codes: Vec<i8> = match (scheme.store, scheme.value.size_bits()) {
        (_, 8) => vals.iter().map(|&b| b as i8).collect(),
        (Store::PackedU32, bits) => {
            let words: Vec<u32> = vals.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            unpack_q_to_i8s(&words, numel, bits)
        }
        _ => unreachable!(),
    };
    assert_eq!(codes.len(), numel);
    match scheme.block_size() {
        None => {
            let s = valid_scale(block_scales[0]);
            codes.iter().map(|&q| s * q as f32).collect()
        }
        Some(block) => {
            let strategy: Vec<f32> = block_scales.iter().map(|&s| valid_scale(global.unwrap_or(1.0) * s)).collect();
            codes.iter().enumerate().map(|(i, &q)| strategy[block_of(shape, &block, &blocks, i)] * q as f32).collect()
        }
    }
}

// --- CBOR as ciborium writes serde's values ----------------------------------------------------------

fn head(major: u8, n: u64) -> Vec<u8> {
    let m = major << 5;
    if n < 24 { vec![m | n as u8] }
    else if n < 256 { vec![m | 24, n as u8] }
    else if n < 65536 { let mut v = vec![m | 25]; v.extend((n as u16).to_be_bytes()); v }
    else if n < (1 << 32) { let mut v = vec![m | 26]; v.extend((n as u32).to_be_bytes()); v }
    else { let mut v = vec![m | 27]; v.extend(n.to_be_bytes()); v }
}
fn text(s: &str) -> Vec<u8> { let mut v = head(3, s.len() as u64); v.extend(s.as_bytes()); v }
fn uint(n: u64) -> Vec<u8> { head(0, n) }
const NULL: u8 = 0xf6;

fn scheme_cbor(s: &Scheme) -> Vec<u8> {
    // DType::QFloat(QuantScheme { value, store, mode, tensor, block })
    let mut v = head(5, 1);
    v.extend(text("QFloat"));
    v.extend(head(5, 5));
    v.extend(text("value")); v.extend(text(s.value.name()));
    v.extend(text("store"));
    match s.store {
        Store::Native => v.extend(text("Native")),
        Store::PackedU32 => { v.extend(head(5, 1)); v.extend(text("PackedU32")); v.extend(uint(0)); }
    }
    v.extend(text("mode")); v.extend(text("Symmetric"));
    v.extend(text("tensor"));
    match s.tensor { None => v.push(NULL), Some(d) => v.extend(text(d.name())) }
    v.extend(text("block"));
    match s.block {
        None => v.push(NULL),
        Some((storage, len, d)) => {
            v.extend(head(5, 2));
            v.extend(text("size"));
            v.extend(head(5, 2));
            v.extend(text("storage")); v.extend(head(4, 5));
            for b in storage { v.extend(uint(b as u64)); }
            v.extend(text("len")); v.extend(uint(len as u64));
            v.extend(text("dtype")); v.extend(text(d.name()));
        }
    }
    v
}

struct Entry { name: String, dtype: Vec<u8>, shape: Vec<usize>, data: Vec<u8> }

/// burn-pack's writer: header, CBOR metadata (tensors sorted by name), zero padding to 256,
/// each tensor's data on a 256-byte boundary, in the given order.
fn burnpack(entries: &[Entry]) -> Vec<u8> {
    let mut starts = Vec::new();
    let mut pos = 0usize;
    for e in entries {
        let start = pos.div_ceil(256) * 256;
        starts.push(start);
        pos = start + e.data.len();
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| entries[a].name.cmp(&entries[b].name));
    let mut meta = head(5, 1);
    meta.extend(text("tensors"));
    meta.extend(head(5, entries.len() as u64));
    for &i in &order {
        let e = &entries[i];
        meta.extend(text(&e.name));
        meta.extend(head(5, 3));
        meta.extend(text("dtype")); meta.extend(e.dtype.clone());
        meta.extend(text("shape")); meta.extend(head(4, e.shape.len() as u64));
        for &d in &e.shape { meta.extend(uint(d as u64)); }
        meta.extend(text("data_offsets")); meta.extend(head(4, 2));
        meta.extend(uint(starts[i] as u64)); meta.extend(uint((starts[i] + e.data.len()) as u64));
    }
    let mut out = b"NRUB".to_vec();
    out.extend(1u16.to_le_bytes());
    out.extend((meta.len() as u32).to_le_bytes());
    out.extend(meta);
    let data_start = out.len().div_ceil(256) * 256;
    out.resize(data_start, 0);
    for (e, &s) in entries.iter().zip(&starts) {
        out.resize(data_start + s, 0);
        out.extend(&e.data);
    }
    out
}

// --- the tensors ---------------------------------------------------------------------------------

/// A small deterministic generator (xorshift), values roughly in [-scale, scale].
fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
    let mut x = seed | 1;
    (0..n).map(|_| {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        ((x >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0) * scale
    }).collect()
}

fn blk(dims: &[u8], dtype: Sd) -> Option<([u8; 5], u8, Sd)> {
    let mut storage = [1u8; 5];
    storage[..dims.len()].copy_from_slice(dims);
    Some((storage, dims.len() as u8, dtype))
}

fn main() {
    let out = std::env::args().nth(1).expect("usage: qfloat_gen OUT_DIR");
    let native = |value, tensor, block| Scheme { value, store: Store::Native, tensor, block };
    let packed = |value, tensor, block| Scheme { value, store: Store::PackedU32, tensor, block };
    let mut cases: Vec<(&str, Scheme, Vec<usize>, Vec<f32>)> = vec![
        ("q8s_tensor", native(Value::Q8S, None, None), vec![4, 16], values(64, 1, 2.0)),
        ("q8s_tensor_f16", native(Value::Q8S, Some(Sd::F16), None), vec![3, 8], values(24, 2, 0.3)),
        ("q8f_tensor_packed", packed(Value::Q8F, Some(Sd::F32), None), vec![2, 12], values(24, 3, 5.0)),
        ("q8s_block32", native(Value::Q8S, None, blk(&[32], Sd::F32)), vec![4, 64], values(256, 4, 1.0)),
        ("q8s_block_2d_f16", native(Value::Q8S, None, blk(&[2, 4], Sd::F16)), vec![6, 8], values(48, 5, 0.7)),
        ("q8f_block_partial_bf16", native(Value::Q8F, None, blk(&[8], Sd::BF16)), vec![3, 20], values(60, 6, 3.0)),
        ("q8s_block_3d", native(Value::Q8S, None, blk(&[2, 1, 4], Sd::F32)), vec![4, 3, 8], values(96, 7, 1.5)),
        ("q8s_vector_block", native(Value::Q8S, None, blk(&[8], Sd::F32)), vec![24], values(24, 8, 0.05)),
        ("q8s_two_level", native(Value::Q8S, Some(Sd::F32), blk(&[16], Sd::UE4M3)), vec![2, 32], values(64, 9, 4.0)),
        ("q4s_block16_packed", packed(Value::Q4S, None, blk(&[16], Sd::F32)), vec![4, 32], values(128, 10, 1.0)),
        ("q4f_tensor_packed", packed(Value::Q4F, None, None), vec![2, 16], values(32, 11, 1.0)),
        ("q2s_tensor_packed", packed(Value::Q2S, None, None), vec![2, 32], values(64, 12, 1.0)),
    ];
    // a block of zeros: its scale is stored as 0, and read back as burn's 0.1 (codes are 0)
    for v in &mut cases[3].3[64..96] { *v = 0.0; }
    let mut quantized = Vec::new();
    let mut expected = Vec::new();
    for (name, scheme, shape, data) in &cases {
        let bytes = quantize(data, shape, scheme);
        let deq = dequantize(&bytes, shape, scheme);
        quantized.push(Entry { name: name.to_string(), dtype: scheme_cbor(scheme), shape: shape.clone(), data: bytes });
        expected.push(Entry { name: name.to_string(), dtype: text("F32"), shape: shape.clone(),
                              data: deq.iter().flat_map(|x| x.to_le_bytes()).collect() });
    }
    let bias = values(8, 13, 1.0);
    let bias_bytes: Vec<u8> = bias.iter().flat_map(|x| x.to_le_bytes()).collect();
    quantized.push(Entry { name: "bias".into(), dtype: text("F32"), shape: vec![8], data: bias_bytes.clone() });
    expected.push(Entry { name: "bias".into(), dtype: text("F32"), shape: vec![8], data: bias_bytes });
    fs::write(format!("{out}/qfloat.bpk"), burnpack(&quantized)).unwrap();
    fs::write(format!("{out}/qfloat_expected.bpk"), burnpack(&expected)).unwrap();
    let n: usize = cases.iter().map(|c| c.2.iter().product::<usize>()).sum();
    println!("{} quantized tensors, {} values", cases.len(), n);
}
