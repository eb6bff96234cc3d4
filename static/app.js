// Keyboard help for 3 a.m.: "/" focuses the filter, "g o" goes to the overview.
(function () {
  "use strict";
  let pendingG = false;
  document.addEventListener("keydown", function (e) {
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || e.ctrlKey || e.metaKey || e.altKey) {
      return;
    }
    if (e.key === "/") {
      const q = document.getElementById("q");
      if (q) { e.preventDefault(); q.focus(); q.select(); }
    } else if (e.key === "g") {
      pendingG = true;
      setTimeout(function () { pendingG = false; }, 1000);
    } else if (e.key === "o" && pendingG) {
      window.location.href = "/";
    }
  });
})();
