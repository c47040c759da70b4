// The page's data (written by `joinery animate`, docs/animation.md): a JSON header in
// <script id="jy-data"> and the frames as base64 float32. Each visual has ten values per
// frame, a0 a1 a2 b0 b1 b2 q0 q1 q2 q3 (part.h's jyVisual): those that never change are in
// `base`, the others are columns of the frame stream, in `cols` order.
export const KINDS = ['none', 'point', 'rod', 'spring', 'damper', 'frame', 'ground', 'arrow', 'rope'];

export function readData() {
  const head = JSON.parse(document.getElementById('jy-data').textContent);
  const bin = atob(head.frames);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Float32Array(bytes.buffer);
  const nf = head.t.length, width = head.width;
  if (stream.length !== nf * width) throw new Error('frame data does not match its header');
  const visuals = head.visuals.map((v) => ({ ...v, kindName: KINDS[v.kind] || 'none' }));
  // The ten values of visual i at frame f, into out.
  function values(i, f, out) {
    const v = visuals[i];
    for (let k = 0; k < 10; k++) out[k] = v.base[k];
    for (let c = 0; c < v.cols.length; c++) out[v.cols[c]] = stream[f * width + v.at + c];
    return out;
  }
  return { head, visuals, values, t: head.t };
}

// The force the arrows are scaled by: the 95th percentile of every arrow's magnitude over
// the run (0: none), so that a few impulsive peaks do not shrink every other arrow to nothing.
export function forceScale(data) {
  const mags = [], x = new Float64Array(10);
  data.visuals.forEach((v, i) => {
    if (v.kindName !== 'arrow') return;
    for (let f = 0; f < data.t.length; f++) {
      data.values(i, f, x);
      const m = Math.hypot(x[3], x[4], x[5]);
      if (m > 0) mags.push(m);
    }
  });
  if (mags.length === 0) return 0;
  mags.sort((a, b) => a - b);
  return mags[Math.min(mags.length - 1, Math.floor(0.95 * mags.length))];
}

// The hash parameters: #t=1.5&speed=2&ui=0&view=xmin,ymin,xmax,ymax&forces=1
export function hashParams() {
  const p = new URLSearchParams(location.hash.slice(1));
  const out = {};
  for (const [k, v] of p) out[k] = v;
  return out;
}

// The frame shown at time t: the last at or before it.
export function frameAt(t, times) {
  let lo = 0, hi = times.length - 1;
  if (!(t > times[0])) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (times[mid] <= t + 1e-12) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
