// Spokes dashboard. Fills the page from GET /api/snapshot, then follows GET /api/events
// (server-sent `snapshot` events), polling /api/snapshot when the stream cannot be had.
// Every element is built with DOM calls; data from the cluster only ever reaches the page
// through textContent and setAttribute.
(() => {
  'use strict';

  // Shared with the Swift side (FillColorScale, NodePalette, MapProjection, StationMapSVG).
  const FILL_STOPS = __FILL_STOPS__;
  const NO_DOCKS_COLOR = '__NO_DOCKS_COLOR__';
  const NODE_COLORS = __NODE_COLORS__;
  const TIMELINE_SECONDS = __TIMELINE_SECONDS__;
  const MIN_LONGITUDE_SCALE = __MIN_LONGITUDE_SCALE__;

  // Jobs get saturated colours (nodes have the muted ones); red is for failures only.
  const JOB_COLORS = ['#2563eb', '#0d9488', '#ca8a04', '#7c3aed', '#65a30d', '#0891b2', '#92400e', '#a21caf'];
  const FAILED_COLOR = '#dc2626';
  const CANCELLED_COLOR = '#9ca3af';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const MEMBER_STATES = ['alive', 'suspect', 'dead', 'left', 'joining'];
  const JOB_STATES = ['running', 'finished', 'cancelled', 'failed'];
  const FINISHED_STATES = ['finished', 'cancelled', 'failed'];

  const POLL_MS = 1000;
  const UNAUTHORISED_POLL_MS = 3000;
  const STREAM_SILENCE_MS = 4000;
  const STREAM_RETRY_MS = 15000;
  const MAX_EXTRAPOLATION_S = 2;

  const $ = (id) => document.getElementById(id);
  const forcePolling = new URLSearchParams(window.location.search).get('transport') === 'poll';

  const state = {
    snapshot: null,
    receivedAt: 0,
    nodeColors: new Map(),
    pickedJob: null,
  };

  // ---------------------------------------------------------------- small helpers

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svgElement(tag, attributes) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const name in attributes) node.setAttribute(name, String(attributes[name]));
    return node;
  }

  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  function setAttr(node, name, value) {
    const text = String(value);
    if (node.getAttribute(name) !== text) node.setAttribute(name, text);
  }

  function fmtCount(value) {
    return value === null || value === undefined || !isFinite(value) ? '—' : Number(value).toLocaleString('en-US');
  }

  // Seconds as the terminal writes them ("0.05 s", "13.7 s"), then minutes, hours, days.
  function fmtSeconds(value) {
    if (value === null || value === undefined || !isFinite(value)) return '—';
    if (value < 0) value = 0;
    if (value === 0) return '0 s';
    if (value < 10) return value.toFixed(2) + ' s';
    if (value < 60) return value.toFixed(1) + ' s';
    const pad = (n) => String(Math.floor(n)).padStart(2, '0');
    if (value < 3600) return Math.floor(value / 60) + ' min ' + pad(value % 60) + ' s';
    if (value < 86400) return Math.floor(value / 3600) + ' h ' + pad((value % 3600) / 60) + ' min';
    return Math.floor(value / 86400) + ' d ' + Math.floor((value % 86400) / 3600) + ' h';
  }

  function fmtMilliseconds(value) {
    return value === null || value === undefined || !isFinite(value) ? '—' : value.toFixed(2) + ' ms';
  }

  function fmtPercent(part, whole) {
    return whole > 0 ? Math.floor((part * 100) / whole) + '%' : '100%';
  }

  function knownOr(value, known, fallback) {
    return known.indexOf(value) >= 0 ? value : fallback;
  }

  function clamp(value, low, high) {
    return Math.min(Math.max(value, low), high);
  }

  // A job's colour starts from FNV-1a of its id, so a job looks the same on every page;
  // when a job on screen already has that colour, the next free one is taken, and a job
  // keeps its colour for as long as it stays on screen.
  const jobColors = new Map();

  function hashColorIndex(id) {
    let hash = 0x811c9dc5;
    for (const character of String(id)) {
      hash ^= character.codePointAt(0);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return hash % JOB_COLORS.length;
  }

  function assignJobColors(snapshot) {
    const visible = new Set();
    for (const job of snapshot.jobs) visible.add(job.id);
    for (const task of snapshot.tasks) visible.add(task.job);
    for (const id of Array.from(jobColors.keys())) if (!visible.has(id)) jobColors.delete(id);
    const taken = new Set(jobColors.values());
    for (const id of Array.from(visible).sort()) {
      if (jobColors.has(id)) continue;
      const first = hashColorIndex(id);
      let color = JOB_COLORS[first];
      for (let step = 0; step < JOB_COLORS.length; step += 1) {
        const candidate = JOB_COLORS[(first + step) % JOB_COLORS.length];
        if (!taken.has(candidate)) {
          color = candidate;
          break;
        }
      }
      jobColors.set(id, color);
      taken.add(color);
    }
  }

  function jobColor(id) {
    return jobColors.get(id) || JOB_COLORS[hashColorIndex(id)];
  }

  function nodeColor(name) {
    return state.nodeColors.get(name) || NODE_COLORS[NODE_COLORS.length - 1];
  }

  function isBikeJob(job) {
    return job.kind === 'bikes.user';
  }

  function unitOf(job) {
    return isBikeJob(job) ? 'users' : 'tasks';
  }

  // The same interpolation as FillColorScale.color(fraction:).
  function fillColor(bikes, capacity) {
    if (!(capacity > 0)) return NO_DOCKS_COLOR;
    const fraction = clamp(bikes / capacity, 0, 1) || 0;
    let lower = FILL_STOPS[0];
    for (let index = 1; index < FILL_STOPS.length; index += 1) {
      const upper = FILL_STOPS[index];
      if (fraction <= upper[0]) {
        const t = upper[0] > lower[0] ? (fraction - lower[0]) / (upper[0] - lower[0]) : 0;
        const mix = (channel) => Math.round(lower[1][channel] + (upper[1][channel] - lower[1][channel]) * t);
        return '#' + [0, 1, 2].map((channel) => mix(channel).toString(16).padStart(2, '0')).join('');
      }
      lower = upper;
    }
    return '#' + lower[1].map((channel) => channel.toString(16).padStart(2, '0')).join('');
  }

  // The same arithmetic as StationMapSVG.radius(capacity:).
  function stationRadius(capacity) {
    return Math.min(6, 2 + Math.sqrt(Math.max(0, capacity || 0)) * 0.5);
  }

  // Equirectangular, longitude scaled by cos(mean latitude), fitted and centred: as MapProjection.
  function makeProjection(places, width, height, margin) {
    const usable = places.filter((p) => isFinite(p.latitude) && isFinite(p.longitude));
    let k = 1;
    if (usable.length > 0) {
      const meanLatitude = usable.reduce((sum, p) => sum + p.latitude, 0) / usable.length;
      k = Math.max(MIN_LONGITUDE_SCALE, Math.cos((meanLatitude * Math.PI) / 180));
    }
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const p of usable) {
      const x = p.longitude * k, y = -p.latitude;
      minX = Math.min(minX, x); maxX = Math.max(maxX, x);
      minY = Math.min(minY, y); maxY = Math.max(maxY, y);
    }
    const innerWidth = Math.max(0, width - 2 * margin), innerHeight = Math.max(0, height - 2 * margin);
    let scale = Infinity;
    if (maxX - minX > 0) scale = Math.min(scale, innerWidth / (maxX - minX));
    if (maxY - minY > 0) scale = Math.min(scale, innerHeight / (maxY - minY));
    if (!isFinite(scale)) scale = 0;
    const centreX = usable.length ? (minX + maxX) / 2 : 0, centreY = usable.length ? (minY + maxY) / 2 : 0;
    const aspect = maxX - minX > 0 && maxY - minY > 0 ? (maxY - minY) / (maxX - minX) : 1;
    return {
      aspect,
      unitsPerKilometre: scale / 111.32,
      project(latitude, longitude) {
        if (!isFinite(latitude) || !isFinite(longitude)) return [width / 2, height / 2];
        return [width / 2 + (longitude * k - centreX) * scale, height / 2 + (-latitude - centreY) * scale];
      },
    };
  }

  function niceStep(rough) {
    if (!(rough > 0) || !isFinite(rough)) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(rough)));
    for (const multiple of [1, 2, 5, 10]) if (multiple * power >= rough * (1 - 1e-9)) return multiple * power;
    return 10 * power;
  }

  // ---------------------------------------------------------------- connection

  class Unauthorised extends Error {}

  const connection = {
    mode: 'starting', // 'stream', 'polling' or 'unauthorised'
    source: null,
    opened: false,
    errors: 0,
    pollTimer: 0,
    silenceTimer: 0,
    retryTimer: 0,
  };

  function showConnection(kind, label) {
    setAttr($('connection'), 'data-state', kind);
    setText($('connection-label'), label);
  }

  async function fetchJSON(path) {
    const response = await fetch(path, { cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (response.status === 401) throw new Unauthorised('401');
    if (!response.ok) throw new Error('HTTP ' + response.status);
    return response.json();
  }

  function openStream() {
    closeStream();
    let source;
    try {
      source = new EventSource('/api/events');
    } catch (error) {
      startPolling();
      return;
    }
    connection.source = source;
    connection.opened = false;
    connection.errors = 0;
    source.addEventListener('open', () => {
      if (connection.source !== source) return;
      connection.opened = true;
      connection.errors = 0;
      armSilence();
    });
    source.addEventListener('snapshot', (event) => {
      if (connection.source !== source) return;
      let snapshot;
      try {
        snapshot = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      connection.errors = 0;
      if (connection.mode !== 'stream') {
        stopPolling();
        connection.mode = 'stream';
        hideNotice();
      }
      showConnection('live', 'live');
      armSilence();
      accept(snapshot);
    });
    source.addEventListener('error', () => {
      if (connection.source !== source) return;
      connection.errors += 1;
      const hopeless = source.readyState === EventSource.CLOSED || (!connection.opened && connection.errors >= 2) || connection.errors >= 10;
      if (connection.mode === 'stream' && !hopeless) {
        showConnection('reconnecting', 'reconnecting');
        return;
      }
      closeStream();
      if (connection.mode === 'stream' || connection.mode === 'starting') startPolling();
    });
  }

  function closeStream() {
    clearTimeout(connection.silenceTimer);
    if (connection.source) {
      connection.source.close();
      connection.source = null;
    }
  }

  // An open stream that says nothing (a buffering proxy, a stalled node): poll instead.
  // While the browser is reconnecting the stream, leave it to the browser.
  function armSilence() {
    clearTimeout(connection.silenceTimer);
    connection.silenceTimer = setTimeout(() => {
      if (connection.mode !== 'stream') return;
      if (connection.source && connection.source.readyState !== EventSource.OPEN) {
        armSilence();
        return;
      }
      closeStream();
      startPolling();
    }, STREAM_SILENCE_MS);
  }

  function startPolling() {
    if (connection.mode === 'polling' || connection.mode === 'unauthorised') return;
    connection.mode = 'polling';
    showConnection('polling', 'polling');
    schedulePoll(0);
    scheduleStreamRetry();
  }

  function stopPolling() {
    clearTimeout(connection.pollTimer);
    clearTimeout(connection.retryTimer);
  }

  function schedulePoll(delay) {
    clearTimeout(connection.pollTimer);
    connection.pollTimer = setTimeout(poll, delay);
  }

  // While polling, try the stream again now and then: the first event switches back.
  function scheduleStreamRetry() {
    if (forcePolling) return;
    clearTimeout(connection.retryTimer);
    connection.retryTimer = setTimeout(() => {
      if (connection.mode === 'polling') openStream();
      scheduleStreamRetry();
    }, STREAM_RETRY_MS);
  }

  async function poll() {
    if (connection.mode === 'stream') return;
    try {
      const snapshot = await fetchJSON('/api/snapshot');
      if (connection.mode === 'unauthorised') {
        connection.mode = 'polling';
        hideNotice();
        scheduleStreamRetry();
      }
      if (connection.mode === 'stream') return;
      showConnection('polling', 'polling');
      accept(snapshot);
    } catch (error) {
      if (error instanceof Unauthorised) {
        unauthorised();
      } else {
        showConnection('reconnecting', 'reconnecting');
      }
    }
    if (connection.mode !== 'stream') schedulePoll(connection.mode === 'unauthorised' ? UNAUTHORISED_POLL_MS : POLL_MS);
  }

  // The page was opened without its token: say how to get in, and keep polling slowly
  // so the page recovers once the browser holds the cookie (e.g. from another tab).
  function unauthorised() {
    closeStream();
    clearTimeout(connection.retryTimer);
    connection.mode = 'unauthorised';
    showConnection('polling', 'no token');
    const notice = $('notice');
    notice.replaceChildren();
    notice.appendChild(element('strong', '', 'This page needs the node\u2019s token. '));
    notice.appendChild(document.createTextNode('Open the address the node printed, with its '));
    notice.appendChild(element('code', '', '?token=\u2026'));
    notice.appendChild(document.createTextNode(' (for example '));
    notice.appendChild(element('code', '', window.location.origin + '/?token=\u2026'));
    notice.appendChild(document.createTextNode('); this page retries every few seconds.'));
    notice.hidden = false;
    schedulePoll(UNAUTHORISED_POLL_MS);
  }

  function hideNotice() {
    $('notice').hidden = true;
  }

  async function start() {
    buildMapLegend();
    window.addEventListener('resize', onResize);
    requestAnimationFrame(frame);
    try {
      accept(await fetchJSON('/api/snapshot'));
    } catch (error) {
      if (error instanceof Unauthorised) {
        unauthorised();
        return;
      }
      showConnection('reconnecting', 'reconnecting');
    }
    if (forcePolling) {
      startPolling();
    } else {
      connection.mode = 'stream';
      showConnection(state.snapshot ? 'live' : 'reconnecting', state.snapshot ? 'live' : 'connecting');
      openStream();
      armSilence();
    }
  }

  // ---------------------------------------------------------------- rendering

  function accept(snapshot) {
    if (!snapshot || typeof snapshot !== 'object' || !Array.isArray(snapshot.members)) return;
    snapshot.jobs = Array.isArray(snapshot.jobs) ? snapshot.jobs : [];
    snapshot.tasks = Array.isArray(snapshot.tasks) ? snapshot.tasks : [];
    snapshot.groups = Array.isArray(snapshot.groups) ? snapshot.groups : [];
    snapshot.failovers = Array.isArray(snapshot.failovers) ? snapshot.failovers : [];
    const previous = state.snapshot;
    // A late poll answered after a newer event: drop it (a restarted node's clock starts over, so only a small step back counts).
    if (previous && previous.node === snapshot.node && snapshot.time < previous.time && previous.time - snapshot.time < 10) return;
    state.snapshot = snapshot;
    state.receivedAt = performance.now();
    assignNodeColors(snapshot);
    assignJobColors(snapshot);
    renderHeader(snapshot);
    renderTiles(snapshot);
    renderMembers(snapshot);
    renderJobs(snapshot);
    renderStream(snapshot);
    renderFailovers(snapshot);
    renderMap(snapshot);
  }

  // Colours by sorted node name, as NodePalette.colors(for:) does for reports.
  function assignNodeColors(snapshot) {
    const names = new Set();
    for (const member of snapshot.members) names.add(member.name);
    for (const job of snapshot.jobs) for (const name of Object.keys(job.perNode || {})) names.add(name);
    for (const task of snapshot.tasks) names.add(task.node);
    const sorted = Array.from(names).sort();
    state.nodeColors = new Map(sorted.map((name, index) => [name, NODE_COLORS[index % NODE_COLORS.length]]));
  }

  function renderHeader(snapshot) {
    setText($('cluster-name'), snapshot.cluster || '—');
    setText($('serving-node'), snapshot.node || '—');
    const title = (snapshot.cluster ? snapshot.cluster + ' · ' : '') + 'Spokes dashboard';
    if (document.title !== title) document.title = title;
  }

  function renderTiles(snapshot) {
    const members = snapshot.members;
    const alive = members.filter((m) => m.state === 'alive');
    setText($('tile-members'), String(alive.length));
    const troubled = members.filter((m) => m.state === 'suspect' || m.state === 'dead');
    setText($('tile-members-detail'), 'of ' + members.length + (troubled.length ? ' · ' + troubled.length + ' suspect or dead' : ''));
    const slots = alive.reduce((sum, m) => sum + (m.slots || 0), 0);
    const busy = alive.reduce((sum, m) => sum + (cpuInUse(m) || 0), 0);
    setText($('tile-slots'), busy + ' / ' + slots);
    $('tile-slots-meter').style.width = (slots > 0 ? clamp((busy / slots) * 100, 0, 100) : 0).toFixed(1) + '%';
    const waitingSlots = alive.reduce((sum, m) => sum + (m.waitingSlots || 0), 0);
    const waiting = alive.reduce((sum, m) => sum + (m.waitingSlotsInUse || 0), 0);
    setText($('tile-waiting'), 'waiting ' + fmtCount(waiting) + ' / ' + fmtCount(waitingSlots));
    const running = snapshot.jobs.filter((j) => j.state === 'running');
    setText($('tile-jobs'), String(running.length));
    const ended = snapshot.jobs.length - running.length;
    setText($('tile-jobs-detail'), ended ? ended + ' finished recently' : 'none finished recently');
    const done = members.reduce((sum, m) => sum + (m.completed || 0), 0);
    const failed = members.reduce((sum, m) => sum + (m.failed || 0), 0);
    setText($('tile-done'), fmtCount(done));
    setText($('tile-done-detail'), fmtCount(failed) + ' failed attempt' + (failed === 1 ? '' : 's'));
    const rate = running.reduce((sum, j) => sum + (j.rate || 0), 0);
    setText($('tile-rate'), rate.toFixed(1) + '/s');
    setText($('tile-rate-detail'), running.length ? 'tasks per second, running jobs' : 'no job running');
  }

  // ----- members

  const memberRows = new Map();

  // Cpu slots in use: slotsInUse, or from a node that reports only running tasks, those.
  function cpuInUse(member) {
    return member.slotsInUse != null ? member.slotsInUse : member.running;
  }

  // A budget's cell: "in use / total" and a meter.
  function budgetCell() {
    const td = element('td', 'slots');
    const text = element('span', 'slots-text');
    const meter = element('span', 'meter');
    const fill = element('span', 'meter-fill');
    meter.appendChild(fill);
    td.append(text, meter);
    return { td, text, fill };
  }

  function renderBudget(cell, used, total, color) {
    setText(cell.text, (used === null || used === undefined ? '—' : fmtCount(used)) + ' / ' + fmtCount(total || 0));
    const share = total > 0 && used != null ? clamp(used / total, 0, 1) : 0;
    cell.fill.style.width = (share * 100).toFixed(1) + '%';
    cell.fill.style.backgroundColor = color;
  }

  function memberRow(name) {
    const tr = document.createElement('tr');
    tr.setAttribute('data-member', name);
    const cells = {};
    const nameCell = element('td', 'name');
    cells.swatch = element('span', 'swatch');
    cells.name = element('span', 'member-name', name);
    cells.serving = element('span', 'tag', 'this node');
    nameCell.append(cells.swatch, cells.name, cells.serving);
    const stateCell = element('td');
    cells.state = element('span', 'badge');
    stateCell.appendChild(cells.state);
    const addressCell = element('td', 'address');
    cells.address = element('code');
    addressCell.appendChild(cells.address);
    cells.cpu = budgetCell();
    cells.waiting = budgetCell();
    cells.completed = element('td', 'num');
    cells.failed = element('td', 'num');
    cells.roundTrip = element('td', 'num');
    cells.uptime = element('td', 'num');
    cells.kinds = element('td', 'kinds');
    tr.append(nameCell, stateCell, addressCell, cells.cpu.td, cells.waiting.td, cells.completed, cells.failed, cells.roundTrip, cells.uptime, cells.kinds);
    return { tr, cells };
  }

  function renderMembers(snapshot) {
    const tbody = $('members').tBodies[0];
    const seen = new Set();
    snapshot.members.forEach((member, index) => {
      seen.add(member.name);
      let row = memberRows.get(member.name);
      if (!row) {
        row = memberRow(member.name);
        memberRows.set(member.name, row);
      }
      const c = row.cells;
      setAttr(row.tr, 'data-state', member.state);
      row.tr.classList.toggle('serving', !!member.isServing);
      c.swatch.style.backgroundColor = nodeColor(member.name);
      c.serving.hidden = !member.isServing;
      setText(c.state, member.state);
      c.state.className = 'badge badge-' + knownOr(member.state, MEMBER_STATES, 'other');
      setText(c.address, member.address || '—');
      renderBudget(c.cpu, cpuInUse(member), member.slots, nodeColor(member.name));
      renderBudget(c.waiting, member.waitingSlotsInUse, member.waitingSlots, nodeColor(member.name));
      setText(c.completed, fmtCount(member.completed));
      setText(c.failed, fmtCount(member.failed));
      c.failed.classList.toggle('bad', (member.failed || 0) > 0);
      setText(c.roundTrip, fmtMilliseconds(member.roundTripMilliseconds));
      setText(c.uptime, fmtSeconds(member.uptime));
      setText(c.kinds, Array.isArray(member.kinds) ? member.kinds.join(', ') : '—');
      if (tbody.children[index] !== row.tr) tbody.insertBefore(row.tr, tbody.children[index] || null);
    });
    for (const [name, row] of memberRows) {
      if (!seen.has(name)) {
        row.tr.remove();
        memberRows.delete(name);
      }
    }
    const alive = snapshot.members.filter((m) => m.state === 'alive').length;
    setText($('members-hint'), alive + ' of ' + snapshot.members.length + ' alive');
  }

  // ----- jobs

  const jobCards = new Map();

  function stat(list, name) {
    const box = element('div', 'stat');
    box.appendChild(element('dt', '', name));
    const value = element('dd');
    box.appendChild(value);
    list.appendChild(box);
    return value;
  }

  function jobCard(job) {
    const card = element('article', 'job');
    card.setAttribute('data-job', job.id);
    const c = {};
    const head = element('header', 'job-head');
    c.swatch = element('span', 'swatch');
    c.title = element('h3', 'job-title');
    c.state = element('span', 'badge');
    head.append(c.swatch, c.title, c.state);
    const meta = element('div', 'job-meta');
    c.id = element('code', '', job.id);
    c.coordinator = element('span');
    c.report = element('a', 'report-link', 'report');
    c.report.setAttribute('href', '/jobs/' + encodeURIComponent(job.id) + '/report.html');
    c.report.setAttribute('target', '_blank');
    c.report.setAttribute('rel', 'noopener');
    c.mapLink = element('button', 'map-link', 'show on map');
    c.mapLink.setAttribute('type', 'button');
    c.mapLink.addEventListener('click', (event) => {
      event.stopPropagation();
      pickJob(job.id);
    });
    meta.append(c.id, c.coordinator, c.mapLink, c.report);
    c.replicas = element('div', 'job-replicas');
    const progressLine = element('div', 'progress-line');
    c.progressText = element('span', 'progress-text');
    c.percent = element('span', 'progress-percent');
    progressLine.append(c.progressText, c.percent);
    const progress = element('div', 'progress');
    c.done = element('span', 'progress-done');
    c.failed = element('span', 'progress-failed');
    progress.append(c.done, c.failed);
    const stats = element('dl', 'stats');
    c.rate = stat(stats, 'Rate');
    c.eta = stat(stats, 'ETA');
    c.elapsed = stat(stats, 'Elapsed');
    c.retries = stat(stats, 'Retries');
    c.failedTasks = stat(stats, 'Failed');
    const split = element('div', 'split');
    c.splitBar = element('div', 'split-bar');
    c.splitLegend = element('ul', 'split-legend');
    split.append(c.splitBar, c.splitLegend);
    card.append(head, meta, c.replicas, progressLine, progress, stats, split);
    card.addEventListener('click', () => {
      if (isBikeJob(job)) pickJob(job.id);
    });
    return { card, c, splitKey: '' };
  }

  function renderJobs(snapshot) {
    const list = $('jobs');
    const seen = new Set();
    const shownOnMap = currentMapJob(snapshot);
    const groups = new Map(snapshot.groups.filter((g) => g.job).map((g) => [g.job, g]));
    const alive = new Set(snapshot.members.filter((m) => m.state === 'alive').map((m) => m.name));
    snapshot.jobs.forEach((job, index) => {
      seen.add(job.id);
      let entry = jobCards.get(job.id);
      if (!entry) {
        entry = jobCard(job);
        jobCards.set(job.id, entry);
      }
      const { card, c } = entry;
      const unit = unitOf(job);
      const jobState = knownOr(job.state, JOB_STATES, 'other');
      setAttr(card, 'data-state', job.state);
      card.classList.toggle('bike', isBikeJob(job));
      card.classList.toggle('on-map', job.id === shownOnMap);
      c.swatch.style.backgroundColor = jobColor(job.id);
      setText(c.title, job.title || job.id);
      setText(c.state, job.state);
      c.state.className = 'badge badge-' + jobState;
      // A running job of tasks: its owner, priority and places of its fair share (issue 32).
      const slots = job.slots;
      const sharing = slots && slots.share ? ' · ' + (slots.share.owner || 'no owner') + ', priority ' + slots.share.priority
        + ' · ' + slots.cost + ' ' + fmtCount(slots.inUse || 0)
        + (typeof slots.fairShare === 'number' ? ' of ' + slots.fairShare.toFixed(1) : '') + ' slots' : '';
      setText(c.coordinator, 'coordinated by ' + job.coordinator + sharing);
      c.report.hidden = FINISHED_STATES.indexOf(job.state) < 0 || job.kind !== 'bikes.user';
      c.mapLink.hidden = !isBikeJob(job) || job.id === shownOnMap;
      const total = Math.max(0, job.total || 0);
      const done = Math.max(0, job.done || 0);
      const failed = Math.max(0, job.failed || 0);
      c.done.style.width = (total > 0 ? clamp((done / total) * 100, 0, 100) : 0).toFixed(2) + '%';
      c.done.style.backgroundColor = jobColor(job.id);
      c.failed.style.width = (total > 0 ? clamp((failed / total) * 100, 0, 100) : 0).toFixed(2) + '%';
      let text = fmtCount(done) + ' of ' + fmtCount(total) + ' ' + unit + ' done';
      if (failed) text += ' · ' + fmtCount(failed) + ' failed';
      setText(c.progressText, text);
      setText(c.percent, fmtPercent(done + failed, total));
      setText(c.rate, (job.rate || 0).toFixed(1) + ' ' + unit + '/s');
      const ended = FINISHED_STATES.indexOf(job.state) >= 0;
      setText(c.eta, ended ? 'done' : job.estimatedRemaining == null ? '—' : '~' + fmtSeconds(job.estimatedRemaining));
      setText(c.elapsed, fmtSeconds(job.elapsed));
      setText(c.retries, fmtCount(job.retries));
      setText(c.failedTasks, fmtCount(failed));
      c.retries.classList.toggle('warn', (job.retries || 0) > 0);
      c.failedTasks.classList.toggle('bad', failed > 0);
      renderSplit(entry, job);
      renderReplicas(entry, job.state === 'running' ? groups.get(job.id) : null, alive);
      if (list.children[index] !== card) list.insertBefore(card, list.children[index] || null);
    });
    for (const [id, entry] of jobCards) {
      if (!seen.has(id)) {
        entry.card.remove();
        jobCards.delete(id);
      }
    }
    $('jobs-empty').hidden = snapshot.jobs.length > 0;
    const running = snapshot.jobs.filter((j) => j.state === 'running').length;
    setText($('jobs-hint'), snapshot.jobs.length ? running + ' running · ' + (snapshot.jobs.length - running) + ' finished' : '');
  }

  // Where a running job's Raft group is: "leader n2 · replicas n1 n2 n3", the leader marked,
  // replicas on members that are not alive struck through.
  function renderReplicas(entry, group, alive) {
    const box = entry.c.replicas;
    box.hidden = !group;
    if (!group) return;
    const replicas = Array.isArray(group.replicas) ? group.replicas : [];
    const key = (group.leader || '') + '\u0000' + replicas.map((name) => name + (alive.has(name) ? '' : '\u0002')).join('\u0001');
    if (entry.replicaKey !== key) {
      entry.replicaKey = key;
      box.replaceChildren(element('span', 'replica-leader', group.leader ? 'leader ' + group.leader : 'electing a leader'), element('span', '', '·'));
      box.appendChild(element('span', '', 'replicas'));
      for (const name of replicas) {
        const replica = element('span', 'replica' + (name === group.leader ? ' leader' : '') + (alive.has(name) ? '' : ' down'), name);
        replica.setAttribute('data-replica', name);
        replica.title = (name === group.leader ? 'the leader' : 'a replica') + (alive.has(name) ? '' : ', not alive');
        box.appendChild(replica);
      }
    }
    box.title = 'group ' + group.id + ' · term ' + group.term + ' · commit index ' + fmtCount(group.commitIndex) + ' (as ' + group.node + ', ' + group.role + ', sees it)';
  }

  // Each node's share of a job: done (solid) and running (light) in the node's colour.
  function renderSplit(entry, job) {
    const { c } = entry;
    const perNode = job.perNode || {};
    const names = Object.keys(perNode).sort();
    const total = Math.max(1, job.total || 0);
    if (entry.splitKey !== names.join('\u0000')) {
      entry.splitKey = names.join('\u0000');
      c.splitBar.replaceChildren();
      c.splitLegend.replaceChildren();
      entry.segments = new Map();
      for (const name of names) {
        const done = element('span', 'split-done');
        const running = element('span', 'split-running');
        c.splitBar.append(done, running);
        const item = element('li');
        const swatch = element('span', 'swatch');
        const label = element('span', 'split-name', name);
        const value = element('span', 'split-value');
        item.append(swatch, label, value);
        c.splitLegend.appendChild(item);
        entry.segments.set(name, { done, running, swatch, value });
      }
    }
    for (const name of names) {
      const share = perNode[name] || { done: 0, running: 0 };
      const s = entry.segments.get(name);
      const color = nodeColor(name);
      s.done.style.width = clamp(((share.done || 0) / total) * 100, 0, 100).toFixed(2) + '%';
      s.running.style.width = clamp(((share.running || 0) / total) * 100, 0, 100).toFixed(2) + '%';
      s.done.style.backgroundColor = color;
      s.running.style.backgroundColor = color;
      s.swatch.style.backgroundColor = color;
      let text = fmtCount(share.done || 0) + ' done';
      if (share.running) text += ' · ' + share.running + ' running';
      setText(s.value, text);
      s.done.title = name + ': ' + text;
      s.running.title = name + ': ' + text;
    }
    c.splitLegend.hidden = names.length === 0;
  }

  // ----- task stream

  const stream = {
    key: '',
    svg: null,
    bars: null,
    paths: [],
    retryPath: null,
    failoverPath: null,
    rows: [],
    rowIndex: new Map(),
    byRow: [],
    left: 0,
    right: 0,
    top: 6,
    rowHeight: 14,
    pxPerSecond: 1,
    baseTime: 0,
    shift: 0,
    shiftedBars: null,
    legendKey: '',
  };

  const LABEL_WIDTH = 150;
  const NARROW_LABEL_WIDTH = 100;

  function rowKey(node, slot) {
    return node + '\u0000' + slot;
  }

  // The serving node's slots first, then every member's (their order), then any slot a task names.
  function streamRows(snapshot) {
    const rows = [];
    const seen = new Set();
    const add = (node, slot) => {
      const key = rowKey(node, slot);
      if (seen.has(key)) return;
      seen.add(key);
      rows.push({ node, slot });
    };
    for (const member of snapshot.members) {
      const slots = Math.min(Math.max(0, member.slots || 0), 256);
      for (let slot = 0; slot < slots; slot += 1) add(member.name, slot);
    }
    const extra = snapshot.tasks.filter((t) => !seen.has(rowKey(t.node, t.slot)));
    extra.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : a.slot - b.slot));
    for (const task of extra) add(task.node, task.slot);
    return rows;
  }

  function renderStream(snapshot) {
    const host = $('task-stream');
    const rows = streamRows(snapshot);
    const width = Math.max(320, Math.floor(host.clientWidth || 900));
    const key = width + '|' + rows.map((r) => rowKey(r.node, r.slot)).join('\u0001') + '|' + rows.map((r) => nodeColor(r.node)).join();
    if (key !== stream.key) {
      stream.key = key;
      layoutStream(host, rows, width);
    }
    drawBars(snapshot);
    renderStreamLegend(snapshot);
  }

  function layoutStream(host, rows, width) {
    stream.rows = rows;
    stream.rowIndex = new Map(rows.map((r, index) => [rowKey(r.node, r.slot), index]));
    stream.rowHeight = rows.length ? clamp(Math.floor(300 / rows.length), 5, 18) : 18;
    stream.left = width < 640 ? NARROW_LABEL_WIDTH : LABEL_WIDTH;
    stream.right = width - 14;
    const plotHeight = Math.max(1, rows.length) * stream.rowHeight;
    const height = stream.top + plotHeight + 26;
    stream.pxPerSecond = (stream.right - stream.left) / TIMELINE_SECONDS;

    const svg = svgElement('svg', { class: 'stream-svg', width, height, viewBox: '0 0 ' + width + ' ' + height, role: 'img' });
    svg.setAttribute('aria-label', 'Task stream: task attempts per slot over the last ' + TIMELINE_SECONDS + ' seconds');
    const defs = svgElement('defs', {});
    const clip = svgElement('clipPath', { id: 'stream-clip' });
    clip.appendChild(svgElement('rect', { x: stream.left, y: stream.top, width: stream.right - stream.left, height: plotHeight }));
    const hatch = svgElement('pattern', { id: 'retry-hatch', width: 5, height: 5, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
    hatch.appendChild(svgElement('rect', { x: 0, y: 0, width: 2, height: 5, fill: '#ffffff', 'fill-opacity': 0.6 }));
    defs.append(clip, hatch);
    svg.appendChild(defs);

    // Row bands, one group of rows per node, labelled.
    const rowsGroup = svgElement('g', { class: 'rows' });
    let groupStart = 0;
    rows.forEach((row, index) => {
      const y = stream.top + index * stream.rowHeight;
      if (index % 2 === 1) rowsGroup.appendChild(svgElement('rect', { class: 'row-band', x: stream.left, y, width: stream.right - stream.left, height: stream.rowHeight }));
      if (stream.rowHeight >= 10) {
        const slotLabel = svgElement('text', { class: 'slot-label', x: stream.left - 8, y: y + stream.rowHeight / 2 + 3.5, 'text-anchor': 'end' });
        slotLabel.textContent = String(row.slot);
        rowsGroup.appendChild(slotLabel);
      }
      const last = index === rows.length - 1 || rows[index + 1].node !== row.node;
      if (last) {
        const top = stream.top + groupStart * stream.rowHeight;
        const bottom = y + stream.rowHeight;
        rowsGroup.appendChild(svgElement('rect', { class: 'node-band', x: 2, y: top + 1, width: 4, height: Math.max(1, bottom - top - 2), fill: nodeColor(row.node), rx: 2 }));
        const label = svgElement('text', { class: 'node-label', x: 12, y: (top + bottom) / 2 + 4 });
        const room = Math.floor((stream.left - 40) / 7.5);
        label.textContent = row.node.length > room ? row.node.slice(0, room - 1) + '\u2026' : row.node;
        const title = svgElement('title', {});
        title.textContent = row.node;
        label.appendChild(title);
        rowsGroup.appendChild(label);
        if (index < rows.length - 1) rowsGroup.appendChild(svgElement('line', { class: 'node-rule', x1: 0, x2: stream.right, y1: bottom, y2: bottom }));
        groupStart = index + 1;
      }
    });
    svg.appendChild(rowsGroup);

    // Time axis: fixed, relative to now; the bars slide under it.
    const grid = svgElement('g', { class: 'grid' });
    const axis = svgElement('g', { class: 'axis' });
    const axisY = stream.top + plotHeight;
    const labelEvery = stream.pxPerSecond * 10 < 48 ? 20 : 10;
    for (let seconds = 0; seconds <= TIMELINE_SECONDS; seconds += 10) {
      const x = stream.right - seconds * stream.pxPerSecond;
      (seconds === 0 ? axis : grid).appendChild(svgElement('line', { class: seconds === 0 ? 'now-line' : 'grid-line', x1: x, x2: x, y1: stream.top, y2: axisY + 4 }));
      if (seconds % labelEvery !== 0) continue;
      const label = svgElement('text', { x, y: axisY + 17, 'text-anchor': seconds === 0 ? 'end' : 'middle' });
      label.textContent = seconds === 0 ? 'now' : '\u2212' + seconds + ' s';
      axis.appendChild(label);
    }
    axis.appendChild(svgElement('line', { class: 'axis-line', x1: stream.left, x2: stream.right, y1: axisY, y2: axisY }));

    const clipped = svgElement('g', { 'clip-path': 'url(#stream-clip)' });
    stream.bars = svgElement('g', { class: 'bars' });
    clipped.appendChild(stream.bars);
    svg.append(grid, clipped, axis);
    stream.paths = [];
    stream.retryPath = null;
    stream.failoverPath = null;
    stream.svg = svg;
    svg.addEventListener('mousemove', onStreamHover);
    svg.addEventListener('mouseleave', () => {
      $('stream-tip').hidden = true;
    });
    host.replaceChildren(svg);
    if (!rows.length) {
      const empty = svgElement('text', { class: 'empty-label', x: (stream.left + stream.right) / 2, y: stream.top + 13, 'text-anchor': 'middle' });
      empty.textContent = 'no slots known yet';
      svg.appendChild(empty);
    }
  }

  // One path per colour (job colours, then cancelled, then failed) plus one hatched path
  // over retries: thousands of bars cost a handful of elements. Bars are placed against
  // the snapshot's time; frame() slides them as time passes.
  function drawBars(snapshot) {
    const base = snapshot.time;
    stream.baseTime = base;
    const px = stream.pxPerSecond;
    const right = stream.right;
    const pad = stream.rowHeight >= 8 ? 1.5 : 0.5;
    const height = Math.max(1, stream.rowHeight - 2 * pad);
    const oldest = base - TIMELINE_SECONDS - 2 * MAX_EXTRAPOLATION_S;
    const buckets = new Map();
    const retries = [];
    stream.byRow = stream.rows.map(() => []);
    for (const task of snapshot.tasks) {
      const row = stream.rowIndex.get(rowKey(task.node, task.slot));
      if (row === undefined) continue;
      const end = task.end === null || task.end === undefined ? base + MAX_EXTRAPOLATION_S + 1 : task.end;
      if (end < oldest || !isFinite(task.start)) continue;
      stream.byRow[row].push(task);
      const x0 = right - (base - task.start) * px;
      let width = (end - task.start) * px;
      width = width < 1 ? 1 : width > 3 ? width - 0.75 : width;
      const y = stream.top + row * stream.rowHeight + pad;
      const segment = 'M' + x0.toFixed(1) + ' ' + y.toFixed(1) + 'h' + width.toFixed(1) + 'v' + height.toFixed(1) + 'h' + (-width).toFixed(1) + 'z';
      const color = task.outcome === 'failed' ? FAILED_COLOR : task.outcome === 'cancelled' ? CANCELLED_COLOR : jobColor(task.job);
      let bucket = buckets.get(color);
      if (!bucket) buckets.set(color, (bucket = []));
      bucket.push(segment);
      if (task.attempt > 1) retries.push(segment);
    }
    const colors = Array.from(buckets.keys()).sort((a, b) => rank(a) - rank(b));
    colors.forEach((color, index) => {
      let path = stream.paths[index];
      if (!path) {
        path = svgElement('path', { class: 'bar' });
        stream.bars.insertBefore(path, stream.retryPath);
        stream.paths.push(path);
      }
      setAttr(path, 'fill', color);
      path.setAttribute('d', buckets.get(color).join(''));
    });
    while (stream.paths.length > colors.length) stream.paths.pop().remove();
    if (!stream.retryPath) {
      stream.retryPath = svgElement('path', { class: 'retry', fill: 'url(#retry-hatch)' });
      stream.bars.appendChild(stream.retryPath);
    }
    stream.retryPath.setAttribute('d', retries.join(''));
    if (!stream.failoverPath) {
      stream.failoverPath = svgElement('path', { class: 'failover-mark' });
      stream.bars.appendChild(stream.failoverPath);
    }
    const plotHeight = Math.max(1, stream.rows.length) * stream.rowHeight;
    const marks = snapshot.failovers.filter((event) => event.time >= oldest && isFinite(event.time));
    stream.failoverPath.setAttribute('d', marks.map((event) => 'M' + (right - (base - event.time) * px).toFixed(1) + ' ' + stream.top + 'v' + plotHeight).join(''));
    slideBars();
  }

  function rank(color) {
    return color === FAILED_COLOR ? 2 : color === CANCELLED_COLOR ? 1 : 0;
  }

  // Now on the serving node's clock, extrapolated from the last snapshot (at most a little).
  function serverNow() {
    if (!state.snapshot) return 0;
    const since = (performance.now() - state.receivedAt) / 1000;
    return state.snapshot.time + clamp(since, 0, MAX_EXTRAPOLATION_S);
  }

  // Moves the bars in half-pixel steps: smooth to the eye, and no repaint for frames
  // that would not move anything.
  function slideBars() {
    if (!stream.bars || !state.snapshot) return;
    const shift = Math.round(-(serverNow() - stream.baseTime) * stream.pxPerSecond * 2) / 2;
    if (shift === stream.shift && stream.bars === stream.shiftedBars) return;
    stream.shift = shift;
    stream.shiftedBars = stream.bars;
    stream.bars.setAttribute('transform', 'translate(' + shift + ' 0)');
  }

  function frame() {
    slideBars();
    requestAnimationFrame(frame);
  }

  function onStreamHover(event) {
    const tip = $('stream-tip');
    if (!state.snapshot || !stream.svg) return;
    const box = stream.svg.getBoundingClientRect();
    const x = event.clientX - box.left, y = event.clientY - box.top;
    const row = Math.floor((y - stream.top) / stream.rowHeight);
    if (x < stream.left || x > stream.right || row < 0 || row >= stream.rows.length) {
      tip.hidden = true;
      return;
    }
    const now = serverNow();
    const time = now - (stream.right - x) / stream.pxPerSecond;
    const slack = 1 / stream.pxPerSecond;
    let found = null;
    for (const task of stream.byRow[row] || []) {
      const end = task.end == null ? now : task.end;
      if (task.start - slack <= time && time <= end + slack && (!found || task.start > found.start)) found = task;
    }
    if (!found) {
      tip.hidden = true;
      return;
    }
    const job = state.snapshot.jobs.find((j) => j.id === found.job);
    const lines = [
      (job ? job.title || job.id : found.job),
      (job && isBikeJob(job) ? 'user ' : 'task ') + found.task + ' · attempt ' + found.attempt + (found.attempt > 1 ? ' (retry)' : ''),
      found.node + ' · slot ' + found.slot,
      (found.end == null ? 'running for ' + fmtSeconds(now - found.start) : fmtSeconds(found.end - found.start)) + ' · ' + found.outcome,
    ];
    tip.replaceChildren(...lines.map((line, index) => element('div', index === 0 ? 'tip-title' : '', line)));
    tip.hidden = false;
    const panel = $('stream-panel').getBoundingClientRect();
    const left = clamp(event.clientX - panel.left + 14, 0, Math.max(0, panel.width - 260));
    tip.style.left = left + 'px';
    tip.style.top = (event.clientY - panel.top + 14) + 'px';
  }

  function renderStreamLegend(snapshot) {
    const jobs = new Map();
    for (const job of snapshot.jobs) jobs.set(job.id, job);
    const shown = [];
    const seen = new Set();
    for (const task of snapshot.tasks) {
      if (!seen.has(task.job)) {
        seen.add(task.job);
        shown.push(task.job);
      }
    }
    shown.sort();
    const failovers = snapshot.failovers.length > 0;
    const key = shown.map((id) => id + '\u0000' + (jobs.get(id) ? jobs.get(id).title : '')).join('\u0001') + (failovers ? '|failovers' : '');
    if (key === stream.legendKey) return;
    stream.legendKey = key;
    const legend = $('stream-legend');
    legend.replaceChildren();
    const item = (className, label, color, title) => {
      const span = element('span', 'key ' + className);
      const swatch = element('span', 'swatch');
      if (color) swatch.style.backgroundColor = color;
      span.append(swatch, document.createTextNode(label));
      if (title) span.title = title;
      legend.appendChild(span);
    };
    for (const id of shown.slice(0, 8)) {
      const job = jobs.get(id);
      item('key-job', id, jobColor(id), job ? job.title : id);
    }
    if (shown.length > 8) legend.appendChild(element('span', 'key', '+' + (shown.length - 8) + ' more'));
    item('key-failed', 'failed', FAILED_COLOR);
    item('key-retry', 'retry', null);
    item('key-cancelled', 'cancelled', CANCELLED_COLOR);
    if (failovers) item('key-failover', 'new leader', null, 'a job\u2019s Raft group elected another leader (failover)');
  }

  // ----- failovers: the newest changes of a group's leader, under the task stream

  function failoverText(event) {
    return (event.job ? 'job ' + event.job : 'group ' + event.group) + ': leader ' + event.from + ' \u2192 ' + event.to + ' (term ' + event.term + ')';
  }

  function renderFailovers(snapshot) {
    const list = $('failovers');
    const shown = snapshot.failovers.slice(-5).reverse();
    list.hidden = shown.length === 0;
    list.replaceChildren(...shown.map((event) => {
      const item = element('li', 'failover');
      item.setAttribute('data-group', event.group);
      item.append(element('span', 'failover-when', fmtSeconds(snapshot.time - event.time) + ' ago'), element('span', '', failoverText(event)));
      return item;
    }));
  }

  // ----- station map

  const map = {
    job: null,
    width: 0,
    circles: [],
    titles: [],
    shown: [],
    view: null,
    loads: new Map(),
  };

  function currentMapJob(snapshot) {
    const bikeJobs = snapshot.jobs.filter(isBikeJob);
    if (state.pickedJob && bikeJobs.some((j) => j.id === state.pickedJob)) return state.pickedJob;
    const running = bikeJobs.find((j) => j.state === 'running');
    return running ? running.id : bikeJobs.length ? bikeJobs[0].id : null;
  }

  function pickJob(id) {
    state.pickedJob = id;
    if (state.snapshot) {
      renderJobs(state.snapshot);
      renderMap(state.snapshot);
    }
  }

  function loadStations(id) {
    let entry = map.loads.get(id);
    if (entry && !(entry.status === 'error' && performance.now() - entry.at > 5000)) return entry;
    entry = { status: 'loading', view: null, at: performance.now() };
    map.loads.set(id, entry);
    fetchJSON('/api/jobs/' + encodeURIComponent(id) + '/stations')
      .then((view) => {
        if (!view || !Array.isArray(view.stations)) throw new Error('no stations');
        entry.status = 'ready';
        entry.view = view;
      })
      .catch((error) => {
        if (error instanceof Unauthorised) unauthorised();
        entry.status = 'error';
        entry.at = performance.now();
      })
      .then(() => {
        if (state.snapshot) renderMap(state.snapshot);
      });
    return entry;
  }

  function renderMapPicker(snapshot, current) {
    const select = $('map-job');
    const bikeJobs = snapshot.jobs.filter(isBikeJob);
    const key = bikeJobs.map((j) => j.id + '\u0000' + j.state).join('\u0001');
    if (select.dataset.key !== key) {
      select.dataset.key = key;
      select.replaceChildren(...bikeJobs.map((job) => {
        const option = element('option', '', job.id + ' · ' + job.state);
        option.value = job.id;
        return option;
      }));
    }
    if (current && select.value !== current) select.value = current;
    select.parentElement.hidden = bikeJobs.length < 2;
  }

  function renderMap(snapshot) {
    const current = currentMapJob(snapshot);
    renderMapPicker(snapshot, current);
    for (const id of Array.from(map.loads.keys())) {
      if (!snapshot.jobs.some((j) => j.id === id)) map.loads.delete(id);
    }
    const host = $('station-map');
    const caption = $('map-caption');
    if (!current) {
      if (map.job !== null || !host.querySelector('.empty')) {
        map.job = null;
        host.replaceChildren(element('p', 'empty', 'The map shows the stations of a bike job once one runs.'));
      }
      setText(caption, '');
      return;
    }
    const job = snapshot.jobs.find((j) => j.id === current);
    const entry = loadStations(current);
    if (entry.status !== 'ready') {
      if (map.job !== null) host.replaceChildren();
      map.job = null;
      setText(caption, entry.status === 'loading' ? 'Loading the stations of ' + current + '\u2026' : 'The stations of ' + current + ' could not be loaded; retrying.');
      return;
    }
    const width = Math.max(240, Math.floor(host.clientWidth || 480));
    if (map.job !== current || map.width !== width || map.view !== entry.view) buildMap(host, entry.view, current, width);
    colourStations(job, entry.view, caption);
  }

  function buildMap(host, view, id, width) {
    const places = view.stations;
    const probe = makeProjection(places, 1, 1, 0);
    const height = Math.round(width * clamp(probe.aspect, 0.5, 1.4));
    const projection = makeProjection(places, width, height, 10);
    const svg = svgElement('svg', { class: 'map-svg', width, height, viewBox: '0 0 ' + width + ' ' + height, role: 'img' });
    svg.setAttribute('aria-label', 'Stations of ' + view.network + ' for job ' + id);
    svg.appendChild(svgElement('rect', { class: 'map-ground', x: 0, y: 0, width, height, rx: 6 }));
    if (projection.unitsPerKilometre > 0 && isFinite(projection.unitsPerKilometre)) {
      const kilometres = niceStep(width / 5 / projection.unitsPerKilometre);
      const length = kilometres * projection.unitsPerKilometre;
      const bar = svgElement('g', { class: 'scale-bar' });
      bar.appendChild(svgElement('path', { d: 'M12 ' + (height - 16) + 'v4h' + length.toFixed(2) + 'v-4' }));
      const label = svgElement('text', { x: (17 + length).toFixed(2), y: height - 12 });
      label.textContent = kilometres >= 1 ? kilometres + ' km' : Math.round(kilometres * 1000) + ' m';
      bar.appendChild(label);
      svg.appendChild(bar);
    }
    const group = svgElement('g', { class: 'stations' });
    map.circles = [];
    map.titles = [];
    map.shown = [];
    places.forEach((place, index) => {
      const [x, y] = projection.project(place.latitude, place.longitude);
      const circle = svgElement('circle', { class: 'station', cx: x.toFixed(2), cy: y.toFixed(2), r: stationRadius(place.capacity).toFixed(2), 'data-index': index });
      const title = svgElement('title', {});
      circle.appendChild(title);
      group.appendChild(circle);
      map.circles.push(circle);
      map.titles.push(title);
      map.shown.push(null);
    });
    svg.appendChild(group);
    host.replaceChildren(svg);
    map.job = id;
    map.width = width;
    map.view = view;
  }

  function colourStations(job, view, caption) {
    const live = job && Array.isArray(job.stationBikes) && job.stationBikes.length === view.stations.length;
    let bikes = 0, empty = 0, full = 0, moved = 0;
    view.stations.forEach((place, index) => {
      const count = live ? job.stationBikes[index] : place.bikesAtStart;
      const capacity = place.capacity;
      bikes += count;
      if (capacity > 0 && count <= 0) empty += 1;
      if (capacity > 0 && count >= capacity) full += 1;
      if (count !== place.bikesAtStart) moved += 1;
      if (map.shown[index] === count) return;
      map.shown[index] = count;
      const circle = map.circles[index];
      circle.setAttribute('fill', fillColor(count, capacity));
      circle.classList.toggle('empty', capacity > 0 && count <= 0);
      circle.classList.toggle('full', capacity > 0 && count >= capacity);
      const slots = Math.max(0, capacity - count);
      map.titles[index].textContent = place.name + ': ' + count + ' bike' + (count === 1 ? '' : 's') + ', ' + slots + ' empty slot' + (slots === 1 ? '' : 's') + ' (' + capacity + ' docks)';
    });
    const parts = [view.network, view.stations.length + ' stations', fmtCount(bikes) + ' bikes docked', empty + ' empty', full + ' full'];
    if (live) parts.push(moved + ' changed since the start');
    else parts.push('counts at the start (live counts unavailable)');
    setText(caption, (job ? job.id : view.job) + ' · ' + parts.join(' · '));
  }

  function buildMapLegend() {
    const legend = $('map-legend');
    const entries = [['empty', 0], ['25%', 0.25], ['half', 0.5], ['75%', 0.75], ['full', 1]];
    legend.appendChild(element('span', 'legend-title', 'bikes / docks'));
    for (const [label, fraction] of entries) {
      const key = element('span', 'key');
      const swatch = svgElement('svg', { width: 12, height: 12, viewBox: '0 0 12 12', 'aria-hidden': 'true' });
      swatch.appendChild(svgElement('circle', { cx: 6, cy: 6, r: 5, fill: fillColor(fraction * 100, 100), class: 'swatch-dot' }));
      key.append(swatch, document.createTextNode(label));
      legend.appendChild(key);
    }
    legend.appendChild(element('span', 'legend-note', 'red: no bike to take · blue: no slot to leave one · size: docks'));
  }

  // ---------------------------------------------------------------- events

  let resizeTimer = 0;
  function onResize() {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      stream.key = '';
      if (state.snapshot) {
        renderStream(state.snapshot);
        renderMap(state.snapshot);
      }
    }, 150);
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('map-job').addEventListener('change', (event) => pickJob(event.target.value));
    start();
  });
})();
