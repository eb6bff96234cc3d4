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

// Live updates (htmx-ext-sse). Every EventSource the extension opens goes
// through a pausable wrapper: while the tab is hidden the real connection
// is closed (no stream held, no render per tick on the server); when it is
// shown again a new one opens and the server sends the current fragments
// at once. When a connection drops, a notice says so until one reopens.
(function () {
  "use strict";
  if (!window.htmx || !window.EventSource) {
    return;
  }
  const live = new Set();

  function Pausable(url) {
    this.url = url;
    this.listeners = [];
    this.onopen = null;
    this.onerror = null;
    this.es = null;
    this.readyState = EventSource.CONNECTING;
    live.add(this);
    if (!document.hidden) {
      this.resume();
    }
  }
  Pausable.prototype.resume = function () {
    if (this.es) {
      return;
    }
    const self = this;
    const es = new EventSource(this.url, { withCredentials: true });
    this.es = es;
    this.listeners.forEach(function (l) { es.addEventListener(l[0], l[1]); });
    es.onopen = function (e) {
      self.readyState = es.readyState;
      if (self.onopen) { self.onopen(e); }
    };
    es.onerror = function (e) {
      self.readyState = es.readyState;
      if (es.readyState === EventSource.CLOSED) {
        // The extension opens a new source after a back-off; this one is done.
        self.es = null;
        live.delete(self);
      }
      if (self.onerror) { self.onerror(e); }
    };
  };
  Pausable.prototype.pause = function () {
    if (this.es) {
      this.es.close();
      this.es = null;
    }
  };
  Pausable.prototype.close = function () {
    this.pause();
    this.readyState = EventSource.CLOSED;
    live.delete(this);
  };
  Pausable.prototype.addEventListener = function (name, fn) {
    this.listeners.push([name, fn]);
    if (this.es) { this.es.addEventListener(name, fn); }
  };
  Pausable.prototype.removeEventListener = function (name, fn) {
    this.listeners = this.listeners.filter(function (l) { return l[0] !== name || l[1] !== fn; });
    if (this.es) { this.es.removeEventListener(name, fn); }
  };
  htmx.createEventSource = function (url) { return new Pausable(url); };

  document.addEventListener("visibilitychange", function () {
    live.forEach(function (s) {
      if (document.hidden) { s.pause(); } else { s.resume(); }
    });
  });

  function notice(show) {
    let n = document.getElementById("live-notice");
    if (!show) {
      if (n) { n.remove(); }
      return;
    }
    if (!n) {
      n = document.createElement("p");
      n.id = "live-notice";
      n.className = "live-notice";
      n.setAttribute("role", "status");
      n.dataset.testid = "live-notice";
      n.textContent = "Live updates paused, retrying…";
      document.body.appendChild(n);
    }
  }
  document.addEventListener("htmx:sseError", function () {
    if (!document.hidden) { notice(true); }
  });
  document.addEventListener("htmx:sseOpen", function () { notice(false); });
})();

// Failed background requests. htmx swaps nothing for a 4xx or 5xx answer
// and nothing when the console does not answer, so a button would seem to
// do nothing: the page's alert slot (#request-error, role="alert") says
// what happened instead, in the words of the console's error fragment
// ([data-request-error]) when there is one. A later successful request
// from the same element clears it; so does its Dismiss button.
(function () {
  "use strict";
  let source = null;
  function clear() {
    const s = document.getElementById("request-error");
    if (s) { s.replaceChildren(); }
    source = null;
  }
  function show(elt, heading, message, ref) {
    const s = document.getElementById("request-error");
    if (!s) { return; }
    const box = document.createElement("div");
    box.className = "request-error-box";
    const p = document.createElement("p");
    const strong = document.createElement("strong");
    strong.textContent = heading;
    p.append(strong, " ", message);
    box.appendChild(p);
    if (ref) {
      const r = document.createElement("p");
      r.className = "sub";
      r.textContent = "Reference " + ref + ": the console's log has the cause under it.";
      box.appendChild(r);
    }
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "Dismiss";
    close.addEventListener("click", clear);
    box.appendChild(close);
    s.replaceChildren(box);
    source = elt;
  }
  function text(root, sel) {
    const n = root.querySelector(sel);
    return n ? n.textContent.trim() : "";
  }
  document.addEventListener("htmx:responseError", function (e) {
    const xhr = e.detail.xhr;
    const what = "HTTP " + xhr.status + (xhr.statusText ? " " + xhr.statusText : "");
    let doc = null;
    if ((xhr.getResponseHeader("Content-Type") || "").startsWith("text/html")) {
      doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
    }
    const box = doc && doc.querySelector("[data-request-error]");
    // A page answered with its own message (a form re-rendered with why).
    const said = doc && text(doc, ".form-error, .flash, main [role=alert]:not(#request-error)");
    if (box) {
      show(e.detail.elt, text(box, "h1") + " (" + what + "):", text(box, ".error-message"), text(box, "[data-testid=error-ref]"));
    } else {
      show(e.detail.elt, "The request failed (" + what + ").", said || "Reload the page to see where things stand.", "");
    }
  });
  function unanswered(e) {
    show(e.detail.elt, "The console did not answer.", "The network or the console is down; what this page shows may be out of date.", "");
  }
  document.addEventListener("htmx:sendError", unanswered);
  document.addEventListener("htmx:timeout", unanswered);
  document.addEventListener("htmx:afterRequest", function (e) {
    if (e.detail.successful && source !== null && e.detail.elt === source) { clear(); }
  });
})();

// The run page. When the run changes under the page's forms (the pushed
// status says so with data-testid="run-changed"), fetch the run's section
// again, so the next action shows without a reload: unless something is
// being typed in it (focus in a field, or a field changed), which is kept
// and the note stays. The window's scroll and the focused control stay.
// A refused action answers at its POST path: the address becomes the run
// page's, so a reload reads the page instead of posting again.
(function () {
  "use strict";
  if (!window.htmx) {
    return;
  }
  function typing(live) {
    const a = document.activeElement;
    if (a && live.contains(a) && (a instanceof HTMLTextAreaElement || (a instanceof HTMLInputElement && a.type !== "hidden" && a.type !== "submit"))) {
      return true;
    }
    for (const el of live.querySelectorAll("input, textarea")) {
      if (el.type !== "hidden" && el.value !== el.defaultValue) { return true; }
    }
    return false;
  }
  let busy = false;
  function refresh() {
    const live = document.getElementById("live");
    if (busy || !live || !live.dataset.liveUrl || !live.querySelector('[data-testid="run-changed"]') || typing(live)) {
      return;
    }
    busy = true;
    const act = document.activeElement && live.contains(document.activeElement) ? document.activeElement : null;
    const focused = act ? act.id : "", focusedStep = act && act.closest("li.step[id]") ? act.closest("li.step[id]").id : "";
    // The first step in view stays where it is on the screen.
    let anchor = null, top = 0;
    for (const li of live.querySelectorAll("li.step[id]")) {
      const r = li.getBoundingClientRect();
      if (r.bottom > 0) { anchor = li.id; top = r.top; break; }
    }
    // A step's answer to the last action (what it did, why not) stays.
    const said = [];
    live.querySelectorAll("li.step[id] > .flash, li.step[id] > [data-testid='run-error']").forEach(function (m) {
      said.push([m.parentElement.id, m]);
    });
    htmx.ajax("GET", live.dataset.liveUrl, { target: "#live", swap: "outerHTML" }).then(function () {
      busy = false;
      said.forEach(function (s) {
        const li = document.getElementById(s[0]), line = li && li.querySelector(".step-line");
        if (line) { line.after(s[1]); }
      });
      const a = anchor && document.getElementById(anchor);
      if (a) {
        window.scrollBy(0, a.getBoundingClientRect().top - top);
        // Folded shorter than the scroll above it: bring its line back.
        if (a.getBoundingClientRect().bottom <= 0) { a.scrollIntoView({ block: "nearest" }); }
      }
      // The focused control, or its step when the control is gone.
      const el = (focused && document.getElementById(focused)) || (focusedStep && document.getElementById(focusedStep));
      if (el) { el.focus({ preventScroll: true }); }
    }, function () { busy = false; });
  }
  document.addEventListener("htmx:sseMessage", refresh);
  // A step answered in place: its button is gone, so the keyboard's focus
  // goes to the step (its message is announced by its role).
  document.addEventListener("htmx:afterSettle", function (e) {
    const path = (e.detail && e.detail.pathInfo && e.detail.pathInfo.requestPath) || "";
    const m = /\/steps\/(\d+)\//.exec(path);
    const li = m && document.getElementById("step-" + m[1]);
    if (li && (!document.activeElement || document.activeElement === document.body)) {
      li.focus({ preventScroll: true });
    }
  });
  // Typing stopped (the field left unchanged): a note that waited may act.
  document.addEventListener("focusout", function () { setTimeout(refresh, 0); });
  document.addEventListener("DOMContentLoaded", function () {
    const live = document.getElementById("live");
    if (!live || !live.dataset.liveUrl) { return; }
    const page = live.dataset.liveUrl.replace(/\/live$/, "");
    if (location.pathname !== page) {
      const step = location.pathname.match(/\/steps\/(\d+)\//);
      history.replaceState(null, "", page + (step ? "#step-" + step[1] : ""));
    }
  });
})();

// The navigation's "runs await your decision": a live page's stream pushes
// a mark of the pending runs (#runs-pulse); when it arrives the navigation
// fetches the signed-in user's count at once instead of at its next poll.
(function () {
  "use strict";
  document.addEventListener("htmx:sseMessage", function (e) {
    const nav = document.getElementById("nav-waiting");
    if (nav && window.htmx && e.target && e.target.id === "runs-pulse") {
      htmx.trigger(nav, "runs-changed");
    }
  });
})();
