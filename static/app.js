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

// Picker filters: an input[data-filter] hides the items of the list it
// names whose data-name does not contain the typed text. The filters are
// rendered hidden (.picker-filter): without JavaScript the whole list
// shows instead.
(function () {
  "use strict";
  function apply(f) {
    const list = document.getElementById(f.dataset.filter);
    if (!list) { return; }
    const q = f.value.trim().toLowerCase();
    for (const li of list.querySelectorAll("[data-name]")) {
      li.hidden = q !== "" && !li.dataset.name.toLowerCase().includes(q);
    }
  }
  function firstShown(f) {
    const list = document.getElementById(f.dataset.filter);
    return list && list.querySelector("[data-name]:not([hidden]) input");
  }
  function setup(root) {
    root.querySelectorAll("input[data-filter]").forEach(function (f) {
      const box = f.closest(".picker-filter");
      if (box) { box.hidden = false; }
      apply(f);
    });
  }
  document.addEventListener("input", function (e) {
    if (e.target instanceof HTMLInputElement && e.target.dataset.filter) { apply(e.target); }
  });
  // Enter or ArrowDown in a filter goes to the first match; Space there
  // then picks it. (The filter belongs to no form: Enter cannot submit.)
  document.addEventListener("keydown", function (e) {
    const f = e.target;
    if (!(f instanceof HTMLInputElement) || !f.dataset.filter || (e.key !== "Enter" && e.key !== "ArrowDown")) { return; }
    e.preventDefault();
    const first = firstShown(f);
    if (first) { first.focus(); }
  });
  document.addEventListener("DOMContentLoaded", function () { setup(document); });
  // A flow change swaps the list: keep it filtered by what is typed.
  document.addEventListener("htmx:afterSwap", function () { setup(document); });
})();
