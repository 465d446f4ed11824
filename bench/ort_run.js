#!/usr/bin/env node
// ort_run.js - Times one model on ONNX Runtime (onnxruntime-node from bench/node_modules) and
// prints JSON: session creation time, latency per iteration, error vs reference, peak RSS.
'use strict';
const fs = require('fs');
const path = require('path');

function usage() {
  console.error('usage: ort_run.js MODEL.onnx --input IN.pb [--reference OUT.pb] [--threads N]\n' +
                '                  [--iterations K] [--warmup W] [--max-seconds S]');
  process.exit(1);
}

function parseArgs(argv) {
  const a = { threads: 1, iterations: 10, warmup: 1, maxSeconds: 0 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => { if (i + 1 >= argv.length) usage(); return argv[++i]; };
    if (k === '--input') a.input = v();
    else if (k === '--reference') a.reference = v();
    else if (k === '--threads') a.threads = parseInt(v(), 10);
    else if (k === '--iterations') a.iterations = parseInt(v(), 10);
    else if (k === '--warmup') a.warmup = parseInt(v(), 10);
    else if (k === '--max-seconds') a.maxSeconds = parseFloat(v());
    else if (k.startsWith('-') || a.model) usage();
    else a.model = k;
  }
  if (!a.model || !a.input || !(a.threads >= 1) || !(a.iterations >= 1) || !(a.warmup >= 0))
    usage();
  return a;
}

// --- a minimal protobuf reader for onnx.TensorProto (only what numpy_helper writes) ---

function readVarint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos.i++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
    shift += 7n;
  }
}

const FLOAT = 1;  // onnx.TensorProto.DataType

function readTensorProto(file) {
  const buf = fs.readFileSync(file);
  const pos = { i: 0 };
  const t = { dims: [], dataType: 0, raw: null, floats: [] };
  while (pos.i < buf.length) {
    const key = Number(readVarint(buf, pos));
    const field = key >> 3, wire = key & 7;
    if (wire === 0) {
      const v = readVarint(buf, pos);
      if (field === 1) t.dims.push(Number(v));
      else if (field === 2) t.dataType = Number(v);
    } else if (wire === 2) {
      const len = Number(readVarint(buf, pos));
      const body = buf.subarray(pos.i, pos.i + len);
      pos.i += len;
      if (field === 1) {            // packed dims
        const p = { i: 0 };
        while (p.i < body.length) t.dims.push(Number(readVarint(body, p)));
      } else if (field === 4) {     // packed float_data
        for (let j = 0; j + 4 <= body.length; j += 4) t.floats.push(body.readFloatLE(j));
      } else if (field === 9) {
        t.raw = body;
      }
    } else if (wire === 5) {
      if (field === 4) t.floats.push(buf.readFloatLE(pos.i));
      pos.i += 4;
    } else if (wire === 1) {
      pos.i += 8;
    } else {
      throw new Error(`${file}: unsupported protobuf wire type ${wire}`);
    }
  }
  if (t.dataType !== FLOAT) throw new Error(`${file}: only float tensors are supported`);
  let data;
  if (t.raw) {
    const copy = Buffer.from(t.raw);  // aligned copy
    data = new Float32Array(copy.buffer, copy.byteOffset, copy.length / 4);
  } else {
    data = Float32Array.from(t.floats);
  }
  return { dims: t.dims, data };
}

// VmHWM is this program's own high-water mark; maxRSS (getrusage) also keeps that of the
// process that exec'd node (the Python harness), so it is only the fallback.
function peakRssBytes() {
  try {
    const m = /VmHWM:\s*(\d+)\s*kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch (e) { /* not Linux */ }
  return process.resourceUsage().maxRSS * 1024;  // KiB on Linux
}

function median(xs) {
  const s = [...xs].sort((x, y) => x - y), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  const input = readTensorProto(a.input);
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const sessionMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input.data, input.dims) };
  const lat = [];
  let spent = 0, out = null, budgetHit = false;
  const total = a.warmup + a.iterations;
  for (let k = 0; k < total; k++) {
    const s = process.hrtime.bigint();
    const res = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - s) / 1e6;
    out = res[session.outputNames[0]];
    if (k >= a.warmup) lat.push(ms);
    spent += ms;
    if (a.maxSeconds > 0 && spent >= a.maxSeconds * 1e3 && lat.length > 0 && k + 1 < total) {
      budgetHit = true;
      break;
    }
  }
  const result = {
    system: 'ort', version: ort.env.versions ? ort.env.versions.common : undefined,
    model: a.model, threads: a.threads, batch: input.dims[0], warmup: a.warmup,
    iterations: lat.length, budget_hit: budgetHit, session_ms: sessionMs,
    latency_ms: { min: Math.min(...lat), median: median(lat), max: Math.max(...lat) },
    latencies_ms: lat,
  };
  if (a.reference) {
    const ref = readTensorProto(a.reference);
    const y = out.data;
    let maxAbs = 0, maxRef = 0;
    if (y.length !== ref.data.length)
      throw new Error(`output has ${y.length} values, reference ${ref.data.length}`);
    for (let i = 0; i < y.length; i++) {
      const e = Math.abs(y[i] - ref.data[i]);
      if (!(e <= maxAbs)) maxAbs = Number.isNaN(e) ? Infinity : e;
      maxRef = Math.max(maxRef, Math.abs(ref.data[i]));
    }
    // Relative to the reference's largest magnitude, as glowc bench reports it.
    result.check = { max_abs_err: maxAbs, max_rel_err: maxRef > 0 ? maxAbs / maxRef : maxAbs };
  }
  result.peak_rss_bytes = peakRssBytes();
  await session.release();
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => { console.error(`ort_run: ${e.message || e}`); process.exit(3); });
