// Click a column header of a table.sortable to sort by it (again: reverse).
// Numbers sort by the cell's data-value (exact figures, blanks last); text by content.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table.sortable")) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach((th, index) => {
      if (!th.dataset.sort) return;
      th.addEventListener("click", () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = (row) => {
          const cell = row.cells[index];
          if (th.dataset.sort === "number") {
            const v = cell.dataset.value;
            return v === undefined || v === "" ? null : Number(v);
          }
          return cell.textContent.trim().toLowerCase();
        };
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === y) return 0;
          if (x === null) return 1;
          if (y === null) return -1;
          return (x < y ? -1 : 1) * (ascending ? 1 : -1);
        });
        for (const row of rows) body.appendChild(row);
      });
    });
  }
});
