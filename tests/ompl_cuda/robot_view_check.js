// Runs the script of a page from write_robot_html without a browser: a stub DOM whose canvas counts
// what is drawn. Exit status 0 when the page draws the scene's lines and the robot's spheres over
// several frames; prints the counts.
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const match = html.match(/<script>([\s\S]*)<\/script>/);
if (!match) { console.error('no script in ' + process.argv[2]); process.exit(1); }
let arcs = 0, segments = 0, frameText = '';
const ctx = {
  clearRect() {}, beginPath() {}, moveTo() {}, lineTo() { segments++; }, stroke() {}, fill() {},
  arc(x, y, r) { if (!Number.isFinite(x) || !Number.isFinite(y) || !(r > 0)) throw new Error('bad sphere'); arcs++; },
};
const elements = { view: { getContext: () => ctx, width: 0, height: 0 }, frame: { set textContent(t) { frameText = t; } } };
global.document = { getElementById: id => elements[id] };
global.innerWidth = 800; global.innerHeight = 600; global.addEventListener = () => {};
let draws = 0;
global.requestAnimationFrame = f => { if (++draws < 5) f(); };
global.setTimeout = f => f();
new Function(match[1])();
console.log(`draws ${draws}, line segments ${segments}, spheres ${arcs}, frame ${frameText}`);
process.exit(segments > 0 && arcs > 0 && frameText.startsWith('5 /') ? 0 : 1);
