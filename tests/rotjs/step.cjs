// Steps each case of a JSON file with rot.js's Map.Cellular and prints the results as JSON:
// the peer tests/rotjs.rs compares cavesweep's Moore and von Neumann rules with.
// Input: [{rows, cols, cells: "0101...", born: [..], survive: [..], topology: 8|4, steps}]
// Output: ["0101...", ...], each case's cells after its steps, row-major.
const ROT = require("rot-js");
const fs = require("fs");
const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const out = cases.map((c) => {
  const map = new ROT.Map.Cellular(c.cols, c.rows, {
    born: c.born,
    survive: c.survive,
    topology: c.topology,
  });
  for (let y = 0; y < c.rows; y++) {
    for (let x = 0; x < c.cols; x++) {
      map.set(x, y, c.cells[y * c.cols + x] === "1" ? 1 : 0);
    }
  }
  const cells = new Array(c.rows * c.cols).fill("0");
  for (let s = 0; s < c.steps; s++) {
    map.create(s + 1 === c.steps ? (x, y, v) => { cells[y * c.cols + x] = v ? "1" : "0"; } : null);
  }
  return cells.join("");
});
process.stdout.write(JSON.stringify(out));
