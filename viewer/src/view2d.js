// The planar view: a canvas, x to the right, y up, the whole motion in view (or the
// rectangle #view=xmin,ymin,xmax,ymax asks for: then data -> pixel is exactly that
// rectangle fitted and centred in the canvas, which the tests rely on).
import { start } from './ui.js';
import { forceScale } from './data.js';

export const COLORS = {
  point: '#d62728', rod: '#444444', spring: '#1f77b4', damper: '#9467bd', rope: '#8c564b',
  ground: '#777777', arrow: '#2ca02c', axisX: '#ff7f0e', axisY: '#17becf',
};
const ORDER = ['ground', 'rope', 'spring', 'damper', 'rod', 'frame', 'point', 'arrow'];

function bounds(data) {
  const b = [Infinity, Infinity, -Infinity, -Infinity];
  const x = new Float64Array(10);
  const add = (px, py) => {
    b[0] = Math.min(b[0], px); b[1] = Math.min(b[1], py);
    b[2] = Math.max(b[2], px); b[3] = Math.max(b[3], py);
  };
  data.visuals.forEach((v, i) => {
    if (v.kindName === 'arrow' || v.kindName === 'none') return;
    const ends = ['rod', 'spring', 'damper', 'rope'].includes(v.kindName);
    for (let f = 0; f < data.t.length; f++) {
      data.values(i, f, x);
      add(x[0], x[1]);
      if (ends) add(x[3], x[4]);
    }
  });
  if (!isFinite(b[0])) return [-1, -1, 1, 1];
  const pad = 0.1 * Math.max(b[2] - b[0], b[3] - b[1], 0.1);
  return [b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad];
}

function view2d(stage, data, params) {
  const canvas = document.createElement('canvas');
  stage.appendChild(canvas);
  const ctx = canvas.getContext('2d');
  const box = params.view ? params.view.split(',').map(Number) : bounds(data);
  const extent = Math.max(box[2] - box[0], box[3] - box[1]);
  let W = 0, H = 0, s = 1, ox = 0, oy = 0;
  const X = (x) => ox + (x - box[0]) * s;
  const Y = (y) => H - (oy + (y - box[1]) * s);
  function resize() {
    const dpr = window.devicePixelRatio || 1;
    W = stage.clientWidth; H = stage.clientHeight;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    s = Math.min(W / (box[2] - box[0]), H / (box[3] - box[1]));
    ox = (W - s * (box[2] - box[0])) / 2;
    oy = (H - s * (box[3] - box[1])) / 2;
  }
  // forceScale's force draws a fifth of the scene long; the longest arrow half of it.
  const fmax = forceScale(data);
  const x = new Float64Array(10);
  const line = (x0, y0, x1, y1, color, width) => {
    ctx.strokeStyle = color; ctx.lineWidth = width;
    ctx.beginPath(); ctx.moveTo(X(x0), Y(y0)); ctx.lineTo(X(x1), Y(y1)); ctx.stroke();
  };
  const shapes = {
    rod: (v) => line(v[0], v[1], v[3], v[4], COLORS.rod, 4),
    rope: (v) => line(v[0], v[1], v[3], v[4], COLORS.rope, 1.5),
    spring: (v) => {
      const dx = X(v[3]) - X(v[0]), dy = Y(v[4]) - Y(v[1]), len = Math.hypot(dx, dy) || 1;
      const nx = -dy / len, ny = dx / len, n = 16, amp = 6;
      ctx.strokeStyle = COLORS.spring; ctx.lineWidth = 2; ctx.beginPath();
      ctx.moveTo(X(v[0]), Y(v[1]));
      for (let k = 1; k < n; k++) {
        const u = k / n, side = k % 2 ? amp : -amp;
        ctx.lineTo(X(v[0]) + u * dx + side * nx, Y(v[1]) + u * dy + side * ny);
      }
      ctx.lineTo(X(v[3]), Y(v[4])); ctx.stroke();
    },
    damper: (v) => {
      const mx = (v[0] + v[3]) / 2, my = (v[1] + v[4]) / 2;
      line(v[0], v[1], mx, my, COLORS.damper, 2);
      line(mx, my, v[3], v[4], COLORS.damper, 5);
    },
    point: (v, vis) => {
      const r = vis.size > 0 ? vis.size * s : 6;
      ctx.fillStyle = COLORS.point; ctx.beginPath();
      ctx.arc(X(v[0]), Y(v[1]), r, 0, 2 * Math.PI); ctx.fill();
    },
    frame: (v, vis) => {
      const len = vis.size > 0 ? vis.size : 0.06 * extent;
      const th = 2 * Math.atan2(v[9], v[6]); // rotation about z of (w, 0, 0, z)
      const c = Math.cos(th), sn = Math.sin(th);
      line(v[0], v[1], v[0] + len * c, v[1] + len * sn, COLORS.axisX, 2);
      line(v[0], v[1], v[0] - len * sn, v[1] + len * c, COLORS.axisY, 2);
      ctx.fillStyle = '#222'; ctx.beginPath();
      ctx.arc(X(v[0]), Y(v[1]), 3, 0, 2 * Math.PI); ctx.fill();
    },
    ground: (v) => {
      ctx.strokeStyle = COLORS.ground; ctx.fillStyle = COLORS.ground; ctx.lineWidth = 1.5;
      const n = Math.hypot(v[3], v[4]);
      if (n === 0) { // a pivot: a triangle under the point
        const px = X(v[0]), py = Y(v[1]);
        ctx.beginPath(); ctx.moveTo(px, py); ctx.lineTo(px - 9, py + 14);
        ctx.lineTo(px + 9, py + 14); ctx.closePath(); ctx.stroke();
        return;
      }
      const tx = -v[4] / n, ty = v[3] / n, L = 2 * extent;
      line(v[0] - L * tx, v[1] - L * ty, v[0] + L * tx, v[1] + L * ty, COLORS.ground, 2);
      for (let k = -40; k <= 40; k++) { // hatches on the solid side
        const px = v[0] + (k * extent) / 20 * tx, py = v[1] + (k * extent) / 20 * ty;
        line(px, py, px - 0.03 * extent * (v[3] / n + tx), py - 0.03 * extent * (v[4] / n + ty),
          COLORS.ground, 1);
      }
    },
    arrow: (v) => {
      if (!(fmax > 0)) return;
      const m = Math.hypot(v[3], v[4]);
      const k = Math.min(0.2 / fmax, 0.5 / m) * extent, ex = v[0] + k * v[3], ey = v[1] + k * v[4];
      line(v[0], v[1], ex, ey, COLORS.arrow, 2.5);
      const ang = Math.atan2(Y(ey) - Y(v[1]), X(ex) - X(v[0]));
      ctx.fillStyle = COLORS.arrow; ctx.beginPath(); ctx.moveTo(X(ex), Y(ey));
      ctx.lineTo(X(ex) - 10 * Math.cos(ang - 0.4), Y(ey) - 10 * Math.sin(ang - 0.4));
      ctx.lineTo(X(ex) - 10 * Math.cos(ang + 0.4), Y(ey) - 10 * Math.sin(ang + 0.4));
      ctx.fill();
    },
  };
  function draw(f, forces) {
    ctx.fillStyle = '#ffffff'; ctx.fillRect(0, 0, W, H);
    for (const kind of ORDER) {
      if (kind === 'arrow' && !forces) continue;
      data.visuals.forEach((vis, i) => {
        if (vis.kindName === kind) shapes[kind](data.values(i, f, x), vis);
      });
    }
  }
  resize();
  return { draw, resize };
}

start(view2d);
