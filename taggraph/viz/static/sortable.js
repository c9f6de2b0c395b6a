
document.querySelectorAll("table.sortable").forEach(function (table) {
  var body = table.tBodies[0];
  table.querySelectorAll("thead th").forEach(function (th, col) {
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var key = function (row) { var t = row.cells[col].textContent.trim(), n = t === "" ? NaN : Number(t);
                                 return isNaN(n) ? t : n; };
      var numbers = Array.from(body.rows).some(function (row) { return typeof key(row) === "number"; });
      var down = th.dataset.sorted ? th.dataset.sorted !== "down" : numbers;
      table.querySelectorAll("thead th").forEach(function (h) { delete h.dataset.sorted; });
      th.dataset.sorted = down ? "down" : "up";
      Array.from(body.rows).sort(function (a, b) {
        var x = key(a), y = key(b), c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0)
                                                               : (typeof x === "number" ? -1 : 1);
        return down ? -c : c;
      }).forEach(function (row) { body.appendChild(row); });
    });
  });
});
