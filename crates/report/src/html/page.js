// layout-diff HTML report: details of the block under the pointer or keyboard focus,
// all items opened for printing, a record of any script error in the page itself, and
// a check that each block is drawn at its offset.
(function () {
  var errors = document.getElementById('js-errors');
  function record(message) { errors.textContent += 'script error: ' + message + '\n'; }
  (window.layoutDiffErrors || []).forEach(record);
  window.addEventListener('error', function (e) { record(e.message); });
  var panel = document.getElementById('inspector');
  function show(e) {
    var c = e.target.closest ? e.target.closest('.cell') : null;
    if (c && c.dataset.detail) { panel.textContent = c.dataset.detail; }
  }
  document.addEventListener('mouseover', show);
  document.addEventListener('focusin', show);
  document.addEventListener('mouseout', function (e) {
    if (e.target.closest && e.target.closest('.cell') && !document.activeElement.closest('.cell')) { panel.textContent = ''; }
  });
  window.addEventListener('beforeprint', function () {
    document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  });
  var all = document.getElementById('open-all');
  if (all) {
    all.addEventListener('click', function () {
      var open = all.dataset.open !== '1';
      document.querySelectorAll('details.item').forEach(function (d) { d.open = open; });
      all.dataset.open = open ? '1' : '0';
      all.textContent = open ? 'collapse all' : 'expand all';
    });
  }
  // Self-check of the drawing: every block sits where its byte offset says. Lanes in
  // closed items are checked when opened (measuring them closed forces a layout each).
  function check(root) {
    root.querySelectorAll('.lane').forEach(checkLane);
  }
  function checkLane(lane) {
    if (lane.closest('details:not([open])')) { return; }
    var w = lane.clientWidth;
    lane.querySelectorAll(':scope > .cell').forEach(function (c) {
      var want = parseFloat(c.style.left) * w / 100;
      if (Math.abs(c.offsetLeft - want) > 2) {
        record('layout: ' + c.dataset.name + ' drawn at ' + c.offsetLeft + ' px, not at ' + Math.round(want) + ' px');
      }
    });
  }
  // Labels under a row (member offsets, groups): each on the first level where it
  // covers no label placed before it, the row as tall as its levels. Drawn closed
  // rows are stacked when opened, all of them again when the window is resized.
  function stack(root) {
    root.querySelectorAll('.bands').forEach(function (bands) {
      if (bands.closest('details:not([open])')) { return; }
      var levels = [];
      bands.querySelectorAll(':scope > .band').forEach(function (b) {
        var r = b.getBoundingClientRect();
        var k = 0;
        while (levels[k] && levels[k].some(function (x) { return r.left < x[1] - 0.5 && x[0] < r.right - 0.5; })) { k++; }
        (levels[k] = levels[k] || []).push([r.left, r.right]);
        if (b.classList.contains('lo')) { b.classList.remove('lo'); }
        if (k > 0) { b.style.top = (1 + 15 * k) + 'px'; }
      });
      if (levels.length) { bands.style.height = (1 + 15 * levels.length) + 'px'; }
    });
  }
  check(document);
  stack(document);
  document.querySelectorAll('details.item').forEach(function (d) {
    d.addEventListener('toggle', function () { if (d.open) { check(d); stack(d); } });
  });
  window.addEventListener('resize', function () { stack(document); });
  document.body.dataset.ready = String(document.querySelectorAll('.lane .cell').length);
  // Milliseconds from navigation to here (parse, style, layout, this script).
  document.body.dataset.ms = String(Math.round(performance.now()));
})();
