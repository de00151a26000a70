// The pccbullet web view's page: the scene's panels side by side (or one of them), drawn with three.js
// (vendored, no network), moved by the frames of a WebSocket; HUD, camera frame and force beside them;
// the keys of the scene's key table sent back. Draws only when a frame arrived or the camera moved.
import * as THREE from "three";
import { OrbitControls } from "three/addons/OrbitControls.js";

const $ = (id) => document.getElementById(id);
const canvas = $("view");
let renderer;
try {
  renderer = new THREE.WebGLRenderer({ canvas, antialias: false }); // no antialiasing: cheap in software GL
} catch (e) {
  document.getElementById("loading").textContent = `pccbullet: this browser gives the page no WebGL (${e.message})`;
  throw e;
}
renderer.setPixelRatio(1);
renderer.setScissorTest(true);
const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 50);
camera.up.set(0, 0, 1);
const controls = new OrbitControls(camera, canvas);
const stats = { frames: 0, drawn: 0, fps: 0, meanFps: 0, renderMs: 0, t: null, scene: false, hudLines: 0, image: 0 };
let firstFrameAt = null; // the frames' span, for the mean rate drawn while frames arrived
window.pccbullet = stats; // read by tests and by anyone curious, in the browser's console

let panels = []; // { name, title, scene, arrow, label }
let links = []; // tracked links' Object3D, in the frames' order
let layout = "all";
let dirty = true;
let keys = new Set();
let forceBar = null; // the group whose force fills the bar
const held = new Set();
let socket = null;

controls.addEventListener("change", () => { dirty = true; });
window.addEventListener("resize", () => { dirty = true; });

function decode(b64, Type) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new Type(bytes.buffer);
}

function geometryOf(item, meshes) {
  const d = item.dims;
  let g;
  if (item.kind === "box") g = new THREE.BoxGeometry(d[0], d[1], d[2]);
  else if (item.kind === "sphere") g = new THREE.SphereGeometry(d[0], 24, 16);
  else if (item.kind === "plane") g = new THREE.PlaneGeometry(20, 20);
  else if (item.kind === "mesh") return meshes.get(item.mesh);
  else {
    // PyBullet's cylinders and capsules lie along z, three.js's along y; dims = (length, radius)
    g = item.kind === "cylinder" ? new THREE.CylinderGeometry(d[1], d[1], d[0], 32)
      : new THREE.CapsuleGeometry(d[1], d[0], 8, 24);
    g.rotateX(Math.PI / 2);
  }
  return g;
}

function buildScene(msg) {
  const meshes = new Map();
  for (const [key, m] of Object.entries(msg.meshes)) {
    const g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.BufferAttribute(decode(m.v, Float32Array), 3));
    g.setIndex(new THREE.BufferAttribute(decode(m.f, Uint32Array), 1));
    g.computeVertexNormals();
    meshes.set(key, g);
  }
  panels = [];
  links = Array.from({ length: msg.links }, () => new THREE.Object3D());
  for (const group of msg.groups) {
    const scene = new THREE.Scene();
    const bg = new THREE.Color(...group.background);
    scene.background = bg;
    const dark = bg.r + bg.g + bg.b < 0.6;
    scene.add(new THREE.HemisphereLight(0xffffff, 0x445566, dark ? 0.9 : 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, dark ? 0.5 : 1.6);
    sun.position.set(1, -1.5, 3);
    scene.add(sun);
    const used = new Set(group.items.map((item) => item.link));
    if (group.lamp !== null) used.add(group.lamp);
    for (const i of used) scene.add(links[i]);
    for (const item of group.items) {
      const geometry = geometryOf(item, meshes);
      if (!geometry) continue;
      const [r, g, b, a] = item.rgba;
      const material = new THREE.MeshLambertMaterial({ color: new THREE.Color(r, g, b), transparent: a < 1,
        opacity: a, side: item.kind === "mesh" ? THREE.DoubleSide : THREE.FrontSide }); // cheap in software GL
      const mesh = new THREE.Mesh(geometry, material);
      mesh.position.set(...item.pos);
      mesh.quaternion.set(...item.quat);
      links[item.link].add(mesh);
    }
    if (group.lamp !== null) { // the squid's lamp: a spot light along the lamp link's z axis
      const spot = new THREE.SpotLight(0xfff2d0, 40, 4, THREE.MathUtils.degToRad(25), 0.35, 1.2);
      const aim = new THREE.Object3D();
      aim.position.set(0, 0, 1);
      spot.target = aim;
      links[group.lamp].add(spot, aim);
    }
    const arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 0.1, 0xffcc22, 0.03, 0.02);
    arrow.visible = false;
    scene.add(arrow);
    const label = document.createElement("div");
    label.className = "label";
    label.textContent = group.title;
    panels.push({ name: group.name, title: group.title, scene, arrow, label });
  }
  $("labels").replaceChildren(...panels.map((p) => p.label));
  $("title").textContent = msg.title;
  $("help").textContent = msg.help.join("\n");
  keys = new Set(msg.keys);
  forceBar = msg.force_bar;
  const [eye, target] = msg.camera;
  camera.position.set(...eye);
  controls.target.set(...target);
  controls.update();
  const buttons = [["all", panels.length > 1 ? "side by side" : panels[0].title],
    ...(panels.length > 1 ? panels.map((p) => [p.name, p.title]) : [])];
  $("layout").replaceChildren(...buttons.map(([name, text]) => {
    const b = document.createElement("button");
    b.textContent = text;
    b.dataset.layout = name;
    b.onclick = () => { layout = name; dirty = true; markLayout(); canvas.focus(); };
    return b;
  }));
  layout = "all";
  markLayout();
  $("loading").style.display = "none";
  stats.scene = true;
  dirty = true;
}

function markLayout() {
  for (const b of $("layout").children) b.classList.toggle("on", b.dataset.layout === layout);
}

function applyFrame(buffer) {
  const view = new DataView(buffer);
  const n = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, n)));
  const offset = 4 + n + ((4 - ((4 + n) % 4)) % 4);
  const f = new Float32Array(buffer, offset, Math.min(links.length * 7, (buffer.byteLength - offset) / 4));
  for (let i = 0; i < links.length && 7 * i + 6 < f.length; i++) {
    links[i].position.set(f[7 * i], f[7 * i + 1], f[7 * i + 2]);
    links[i].quaternion.set(f[7 * i + 3], f[7 * i + 4], f[7 * i + 5], f[7 * i + 6]);
  }
  showForce(header.force || {});
  stats.t = header.t;
  stats.frames += 1;
  const now = performance.now();
  if (firstFrameAt === null) firstFrameAt = now;
  else if (now > firstFrameAt) stats.meanFps = (1000 * stats.drawn) / (now - firstFrameAt);
  dirty = true;
}

function showForce(force) {
  let first = true;
  const bar = forceBar ?? panels.find((p) => force[p.name])?.name;
  for (const p of panels) {
    const v = force[p.name];
    p.arrow.visible = false;
    if (!v) continue;
    const f = new THREE.Vector3(v[3], v[4], v[5]);
    const size = f.length();
    const limit = v[6] > 0 ? v[6] : 1;
    if (size > 1e-6) {
      p.arrow.position.set(v[0], v[1], v[2]);
      p.arrow.setDirection(f.clone().normalize());
      p.arrow.setLength(0.05 + 0.2 * Math.min(size / limit, 1), 0.03, 0.02);
      p.arrow.visible = true;
    }
    if (first && p.name === bar) {
      $("forcetext").textContent = `force (${p.title}): ${size.toFixed(2)} N of ${limit} N`;
      $("forcefill").style.width = `${Math.min(100, (100 * size) / limit)}%`;
      first = false;
    }
  }
}

let beat = null; // the heartbeat: the server releases the keys of a page that goes silent
function onText(msg) {
  if (msg.type === "hello") {
    clearInterval(beat);
    beat = setInterval(() => send({ type: "beat" }), 1000 * msg.beat_s);
  } else if (msg.type === "released") { // this page went silent: its keys were let go, press them again
    for (const k of msg.keys) held.delete(k);
    stats.released = (stats.released || 0) + msg.keys.length;
  } else if (msg.type === "error") {
    console.warn(`pccbullet web view: ${msg.message}`);
  } else if (msg.type === "scene") buildScene(msg);
  else if (msg.type === "hud") {
    $("hud").replaceChildren(...msg.lines.map((line) => {
      const div = document.createElement("div");
      div.textContent = line.text;
      div.style.color = `rgb(${line.rgb.map((c) => Math.round(255 * c)).join(",")})`;
      return div;
    }));
    stats.hudLines = msg.lines.length;
  } else if (msg.type === "image") {
    $("camera").querySelector("img").src = msg.src;
    $("camera").querySelector("figcaption").textContent = msg.caption;
    $("camera").classList.remove("empty");
    stats.image += 1;
  }
}

// Software WebGL (no GPU) fills pixels slowly: while frames arrive faster than the page draws them, it
// draws at a lower resolution (down to half), and back up when it keeps up.
let scale = 1;
function adapt(fps, arriving) {
  const next = fps < 0.8 * Math.min(arriving, 40) ? Math.max(0.5, scale * 0.85) : fps > 0.95 * arriving ? Math.min(1, scale * 1.1) : scale;
  if (Math.abs(next - scale) > 0.01) { scale = next; dirty = true; }
}

function draw() {
  const w = Math.round(canvas.clientWidth * scale), h = Math.round(canvas.clientHeight * scale);
  if (canvas.width !== w || canvas.height !== h) renderer.setSize(w, h, false);
  const shown = panels.filter((p) => layout === "all" || p.name === layout);
  const each = Math.floor(w / Math.max(shown.length, 1));
  camera.aspect = each / Math.max(h, 1);
  camera.updateProjectionMatrix();
  for (const p of panels) p.label.style.display = "none";
  shown.forEach((p, i) => {
    renderer.setViewport(i * each, 0, each, h);
    renderer.setScissor(i * each, 0, each, h);
    renderer.render(p.scene, camera);
    p.label.style.display = "block";
    p.label.style.left = `${(i * each) / scale + 6}px`;
  });
}

let window0 = performance.now(), drawn0 = 0, frames0 = 0, renderSum = 0;
function tick(now) {
  if (dirty && panels.length) {
    const t0 = performance.now();
    draw();
    renderSum += performance.now() - t0;
    stats.drawn += 1;
    dirty = false;
  }
  if (now - window0 >= 1000) {
    const n = stats.drawn - drawn0;
    stats.fps = (1000 * n) / (now - window0);
    stats.renderMs = n ? renderSum / n : 0;
    adapt(stats.fps, (1000 * (stats.frames - frames0)) / (now - window0));
    stats.scale = scale;
    window0 = now; drawn0 = stats.drawn; frames0 = stats.frames; renderSum = 0;
    const t = stats.t === null ? "" : ` · t ${stats.t.toFixed(2)} s`;
    $("stats").textContent = `${stats.fps.toFixed(1)} fps drawn · ${stats.frames} frames${t}`;
    send({ type: "stats", fps: stats.fps, mean_fps: stats.meanFps, frames: stats.frames, render_ms: stats.renderMs });
  }
  requestAnimationFrame(tick);
}

function send(msg) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(msg));
}

function keyOf(e) {
  if (e.ctrlKey || e.metaKey || e.altKey || e.key.length !== 1) return null;
  const k = e.key.toLowerCase();
  return keys.has(k) ? k : null;
}
document.addEventListener("keydown", (e) => {
  const k = keyOf(e);
  if (k === null) return;
  e.preventDefault();
  if (!held.has(k)) { held.add(k); send({ type: "key", key: k, down: true }); }
});
document.addEventListener("keyup", (e) => {
  const k = keyOf(e);
  if (k === null || !held.has(k)) return;
  held.delete(k);
  send({ type: "key", key: k, down: false });
});
window.addEventListener("blur", () => { // a key released in another window must not stay held here
  for (const k of held) send({ type: "key", key: k, down: false });
  held.clear();
});

function connect() {
  const url = new URL("ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.search = location.search; // the token, when the server needs one
  socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  socket.onmessage = (e) => (typeof e.data === "string" ? onText(JSON.parse(e.data)) : applyFrame(e.data));
  socket.onopen = () => { $("stats").textContent = "connected"; };
  socket.onclose = () => {
    clearInterval(beat);
    held.clear(); // the server let this page's keys go with its socket
    $("stats").textContent = "disconnected: the session ended or the server stopped (retrying)";
    setTimeout(connect, 2000);
  };
}

connect();
requestAnimationFrame(tick);
