// The controls both views share: play/pause, a time slider, speed, forces, and the hash
// parameters a test or a link sets (#t=, &speed=, &ui=0, &forces=1).
import { readData, hashParams, frameAt } from './data.js';

export function start(makeView) {
  const errors = [];
  window.addEventListener('error', (e) => {
    errors.push(String(e.message));
    document.body.dataset.errors = errors.join('; ');
  });
  const data = readData();
  const params = hashParams();
  const root = document.getElementById('jy-root');
  const stage = document.createElement('div');
  stage.id = 'jy-stage';
  root.appendChild(stage);
  const bar = document.createElement('div');
  bar.id = 'jy-controls';
  bar.innerHTML =
    '<button id="jy-play">pause</button>' +
    '<input id="jy-time" type="range" min="0" step="1">' +
    '<span id="jy-label"></span>' +
    '<label>speed <select id="jy-speed">' +
    ['0.1', '0.25', '0.5', '1', '2', '4'].map((s) => `<option value="${s}">${s}x</option>`).join('') +
    '</select></label>' +
    (data.head.forces ? '<label><input id="jy-forces" type="checkbox"> forces</label>' : '');
  root.appendChild(bar);
  if (params.ui === '0') { // the view alone, on the whole window (tests, screenshots)
    bar.style.display = 'none';
    stage.style.bottom = '0';
  }
  const state = {
    frame: 0,
    playing: !('t' in params),
    speed: Number(params.speed) || 1,
    forces: params.forces === '1',
  };
  const view = makeView(stage, data, params);
  const times = data.t, last = times.length - 1;
  const slider = document.getElementById('jy-time');
  const label = document.getElementById('jy-label');
  const play = document.getElementById('jy-play');
  const speed = document.getElementById('jy-speed');
  const forces = document.getElementById('jy-forces');
  slider.max = String(last);
  speed.value = String(state.speed);
  if (forces) forces.checked = state.forces;
  let clock = 0; // simulated time
  function show(f) {
    state.frame = f;
    slider.value = String(f);
    label.textContent = `t = ${times[f].toFixed(3)} s`;
    view.draw(f, state.forces);
    document.body.dataset.frame = String(f);
    document.body.dataset.time = String(times[f]);
  }
  play.onclick = () => {
    state.playing = !state.playing;
    if (state.playing && state.frame >= last) clock = times[0];
    play.textContent = state.playing ? 'pause' : 'play';
  };
  play.textContent = state.playing ? 'pause' : 'play';
  slider.oninput = () => {
    clock = times[Number(slider.value)];
    show(Number(slider.value));
  };
  speed.onchange = () => (state.speed = Number(speed.value));
  if (forces)
    forces.onchange = () => {
      state.forces = forces.checked;
      show(state.frame);
    };
  window.addEventListener('resize', () => {
    view.resize();
    show(state.frame);
  });
  clock = 't' in params ? Number(params.t) : times[0];
  show(frameAt(clock, times));
  let before = null;
  function tick(now) {
    if (before !== null && state.playing) {
      clock += ((now - before) / 1000) * state.speed;
      if (clock > times[last]) clock = times[0]; // loop
      const f = frameAt(clock, times);
      if (f !== state.frame) show(f);
    }
    before = now;
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
  document.body.dataset.status = 'drawn';
}
