// The spatial view: three.js, a perspective camera that orbits the scene's centre (drag to
// turn, wheel to zoom), "up" against gravity.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { start } from './ui.js';
import { forceScale } from './data.js';

const COLORS = {
  point: 0xd62728, rod: 0x444444, spring: 0x1f77b4, damper: 0x9467bd, rope: 0x8c564b,
  ground: 0x999999, arrow: 0x2ca02c, frame: 0x666666,
};

function view3d(stage, data) {
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  stage.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xffffff);
  scene.add(new THREE.AmbientLight(0xffffff, 0.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.2);
  sun.position.set(3, 5, 4);
  scene.add(sun);
  const x = new Float64Array(10);
  // the scene's extent over the whole run
  const lo = new THREE.Vector3(Infinity, Infinity, Infinity);
  const hi = new THREE.Vector3(-Infinity, -Infinity, -Infinity);
  const fmax = forceScale(data);
  data.visuals.forEach((v, i) => {
    for (let f = 0; f < data.t.length; f++) {
      data.values(i, f, x);
      if (v.kindName === 'arrow') continue;
      lo.min(new THREE.Vector3(x[0], x[1], x[2])); hi.max(new THREE.Vector3(x[0], x[1], x[2]));
      if (['rod', 'spring', 'damper', 'rope'].includes(v.kindName)) {
        lo.min(new THREE.Vector3(x[3], x[4], x[5])); hi.max(new THREE.Vector3(x[3], x[4], x[5]));
      }
    }
  });
  if (!isFinite(lo.x)) { lo.set(-1, -1, -1); hi.set(1, 1, 1); }
  const centre = lo.clone().add(hi).multiplyScalar(0.5);
  const extent = Math.max(hi.clone().sub(lo).length(), 0.1);
  const g = data.head.gravity || [0, 0, -9.81];
  const up = new THREE.Vector3(-g[0], -g[1], -g[2]);
  if (up.length() === 0) up.set(0, 0, 1);
  up.normalize();
  // a faint floor grid under the whole motion, across "up", for depth
  let low = Infinity;
  for (const c of [lo.x, hi.x]) for (const d of [lo.y, hi.y]) for (const e of [lo.z, hi.z])
    low = Math.min(low, up.dot(new THREE.Vector3(c, d, e)));
  const floor = new THREE.GridHelper(2 * extent, 20, 0xdddddd, 0xeeeeee);
  floor.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
  floor.position.copy(centre).addScaledVector(up, low - up.dot(centre));
  scene.add(floor);
  const camera = new THREE.PerspectiveCamera(45, 1, extent / 100, extent * 100);
  camera.up.copy(up);
  const side = new THREE.Vector3(1, 0.6, 0.4);
  side.addScaledVector(up, -side.dot(up)).normalize();
  camera.position.copy(centre).addScaledVector(side, 1.6 * extent).addScaledVector(up, 0.6 * extent);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.target.copy(centre);
  controls.update();
  const mat = (c) => new THREE.MeshStandardMaterial({ color: c, roughness: 0.6 });
  const r = 0.015 * extent;
  const unitCyl = new THREE.CylinderGeometry(1, 1, 1, 16);
  // one object per visual, posed each frame
  const objs = data.visuals.map((v) => {
    const k = v.kindName;
    if (k === 'point') return new THREE.Mesh(new THREE.SphereGeometry(v.size > 0 ? v.size : 2.5 * r, 24, 16), mat(COLORS.point));
    if (k === 'rod' || k === 'damper') {
      const m = new THREE.Mesh(unitCyl, mat(COLORS[k]));
      m.userData.radius = k === 'rod' ? r : 2 * r;
      return m;
    }
    if (k === 'spring' || k === 'rope') {
      const n = k === 'spring' ? 121 : 2;
      const geo = new THREE.BufferGeometry();
      geo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * n), 3));
      return new THREE.Line(geo, new THREE.LineBasicMaterial({ color: COLORS[k] }));
    }
    if (k === 'frame') {
      const grp = new THREE.Group();
      const len = v.size > 0 ? v.size : 0.08 * extent;
      grp.add(new THREE.AxesHelper(len));
      const edge = 0.6 * len; // the axes stick out of it
      grp.add(new THREE.Mesh(new THREE.BoxGeometry(edge, edge, edge), mat(COLORS.frame)));
      return grp;
    }
    if (k === 'ground') return new THREE.Group();
    if (k === 'arrow') return new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, COLORS.arrow);
    return new THREE.Group();
  });
  objs.forEach((o) => scene.add(o));
  const A = new THREE.Vector3(), B = new THREE.Vector3(), D = new THREE.Vector3();
  const yAxis = new THREE.Vector3(0, 1, 0);
  function pose(i, f, forces) {
    const v = data.visuals[i], o = objs[i], k = v.kindName;
    data.values(i, f, x);
    A.set(x[0], x[1], x[2]); B.set(x[3], x[4], x[5]);
    if (k === 'point') o.position.copy(A);
    else if (k === 'rod' || k === 'damper') {
      D.subVectors(B, A);
      const len = D.length();
      o.position.copy(A).addScaledVector(D, 0.5);
      o.scale.set(o.userData.radius, Math.max(len, 1e-9), o.userData.radius);
      if (len > 0) o.quaternion.setFromUnitVectors(yAxis, D.normalize());
    } else if (k === 'spring' || k === 'rope') {
      const p = o.geometry.attributes.position, n = p.count;
      D.subVectors(B, A);
      const u = D.clone().normalize(), w = new THREE.Vector3(), w2 = new THREE.Vector3();
      w.crossVectors(u, Math.abs(u.x) < 0.9 ? new THREE.Vector3(1, 0, 0) : new THREE.Vector3(0, 1, 0)).normalize();
      w2.crossVectors(u, w);
      for (let j = 0; j < n; j++) {
        const s = j / (n - 1), ph = s * 12 * 2 * Math.PI, amp = k === 'spring' && j > 0 && j < n - 1 ? 2 * r : 0;
        p.setXYZ(j, A.x + s * D.x + amp * (Math.cos(ph) * w.x + Math.sin(ph) * w2.x),
          A.y + s * D.y + amp * (Math.cos(ph) * w.y + Math.sin(ph) * w2.y),
          A.z + s * D.z + amp * (Math.cos(ph) * w.z + Math.sin(ph) * w2.z));
      }
      p.needsUpdate = true;
    } else if (k === 'frame') {
      o.position.copy(A);
      if (x[6] || x[7] || x[8] || x[9]) o.quaternion.set(x[7], x[8], x[9], x[6]);
    } else if (k === 'arrow') {
      o.visible = forces && fmax > 0;
      const len = B.length();
      if (len > 0 && fmax > 0) {
        o.position.copy(A);
        o.setDirection(B.clone().normalize());
        o.setLength(Math.min((0.25 * len) / fmax, 0.6) * extent, 0.04 * extent, 0.02 * extent);
      } else o.visible = false;
    }
  }
  // the fixed supports once
  data.visuals.forEach((v, i) => {
    if (v.kindName !== 'ground') return;
    data.values(i, 0, x);
    const n = new THREE.Vector3(x[3], x[4], x[5]);
    if (n.length() === 0) {
      const m = new THREE.Mesh(new THREE.ConeGeometry(3 * r, 6 * r, 16), mat(COLORS.ground));
      m.quaternion.setFromUnitVectors(yAxis, up);
      m.position.set(x[0], x[1], x[2]).addScaledVector(up, -3 * r);
      objs[i].add(m);
    } else {
      const grid = new THREE.GridHelper(2 * extent, 20, COLORS.ground, COLORS.ground);
      grid.quaternion.setFromUnitVectors(yAxis, n.normalize());
      grid.position.set(x[0], x[1], x[2]);
      objs[i].add(grid);
    }
  });
  function resize() {
    const W = stage.clientWidth, H = stage.clientHeight;
    renderer.setSize(W, H);
    camera.aspect = W / Math.max(H, 1);
    camera.updateProjectionMatrix();
  }
  let current = 0, showForces = false;
  function draw(f, forces) {
    current = f; showForces = forces;
    for (let i = 0; i < objs.length; i++) pose(i, f, forces);
    renderer.render(scene, camera);
  }
  controls.addEventListener('change', () => draw(current, showForces));
  resize();
  return { draw, resize };
}

start(view3d);
