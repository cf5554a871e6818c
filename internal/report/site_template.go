package report

import "html/template"

// siteTemplate renders the history site's pages: the report's style and
// script, the charts' JSON in a script block, Chart.js inlined on the
// pages that draw, and the report's page head ("head").
// html/template escapes every value for its context.
var siteTemplate = template.Must(template.Must(htmlTemplate.Clone()).Parse(`
{{- define "site-head" -}}
{{template "head" .}}<style>
figure.chart.history { height: 360px; }
td.worse { color: #b42318; } td.better { color: #1a7f37; }
table.site td, table.site th { padding: 0.2em 0.6em; }
td.trend { font-family: ui-monospace, monospace; white-space: nowrap; }
</style>
</head>
<body>
{{- end}}

{{- define "site-foot" -}}
<footer>perfgate report --history · generated {{.Generated}}{{if .ChartJS}} · charts drawn by Chart.js {{.Version}} (MIT licence), inlined: this page fetches nothing{{else}} · this page fetches nothing{{end}}.</footer>
<script type="application/json" id="perfgate-data">{{.Data}}</script>
{{- if .ChartJS}}
<script>{{.ChartJS}}</script>
<script>
{{.Script}}</script>
{{- end}}
</body>
</html>
{{- end}}

{{- define "site-index" -}}
{{template "site-head" .}}
<header class="verdict none">
<h1>perfgate: performance history</h1>
<p class="facts">{{.Runs}} runs of {{.Scenarios}} scenario(s). Each metric's latest median, its trend over the last 30 runs, and its last change point (where its history moved to a new level: E-divisive means), worse or better by the metric's direction.</p>
</header>
<main>
<table class="site">
<thead><tr><th>scenario</th><th>metric</th><th>latest</th><th>trend (last 30 runs)</th><th>last change point</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{if .First}}<td><a href="{{.Page}}">{{.Scenario}}</a></td>{{else}}<td></td>{{end}}<td>{{.Metric}}</td><td class="num">{{.Latest}}</td><td class="trend">{{.Trend}}</td><td class="{{if .Change}}{{if .Worse}}worse{{else}}better{{end}}{{end}}">{{if .Change}}{{.Change}}{{else}}none{{end}}</td></tr>
{{- end}}
</tbody>
</table>
</main>
{{template "site-foot" .}}
{{- end}}

{{- define "site-scenario" -}}
{{template "site-head" .}}
<header class="verdict none">
<p><a href="index.html">← all scenarios</a></p>
<h1>{{.Name}}</h1>
<p class="facts">{{.Facts}}. Each chart draws every run's median with its 95% interval; promotions are filled points, nightly records small ones; a triangle marks a change point (red worse, green better); a dashed line an identity change; a green line a release tag. A point opens its commit (with Shift its workflow run's report, with Alt its pull request, where known).</p>
<p class="nojs">The charts need JavaScript, which is off: the change points and identity changes are in the tables.</p>
</header>
<main>
<h2>Change points</h2>
{{- if .Changes}}
<table class="site">
<thead><tr><th>metric</th><th>last run before</th><th>first run after</th><th>levels</th><th>change</th><th></th><th>identity changed between them</th></tr></thead>
<tbody>
{{- range .Changes}}
<tr><td>{{.Metric}}</td><td>{{if .FromURL}}<a href="{{.FromURL}}">{{.From}}</a>{{else}}{{.From}}{{end}}</td><td>{{if .ToURL}}<a href="{{.ToURL}}">{{.To}}</a>{{else}}{{.To}}{{end}}</td><td class="num">{{.Levels}}</td><td class="num">{{.Change}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td>{{.Identity}}</td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p>None: no metric's history moved to a new level.</p>
{{- end}}
<h2>Releases</h2>
{{- if .Releases}}
<table class="site">
<thead><tr><th>tag</th><th>date</th><th>commit</th><th>pull request</th><th>workflow run</th></tr></thead>
<tbody>
{{- range .Releases}}
<tr><td>{{.Tag}}</td><td>{{.Date}}</td><td>{{if .URL}}<a href="{{.URL}}">{{.Commit}}</a>{{else}}{{.Commit}}{{end}}</td><td>{{if .PR}}{{if .PRURL}}<a href="{{.PRURL}}">#{{.PR}}</a>{{else}}#{{.PR}}{{end}}{{end}}</td><td>{{if .Run}}<a href="{{.Run}}">report</a>{{end}}</td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p>None: no run recorded a release tag (perfgate baseline promote --tag, or a run on a tag's ref).</p>
{{- end}}
<h2>Identity changes</h2>
{{- if .Identities}}
<table class="site">
<thead><tr><th>first run</th><th>commit</th><th>what changed</th></tr></thead>
<tbody>
{{- range .Identities}}
<tr><td>{{.Date}}</td><td>{{if .URL}}<a href="{{.URL}}">{{.Commit}}</a>{{else}}{{.Commit}}{{end}}</td><td>{{.What}}</td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p>None: every run measured the same engine, model, quantisation, GPU and driver.</p>
{{- end}}
<h2>Metrics</h2>
<div class="charts">
{{- range .Charts}}
<figure class="chart history"><canvas id="{{.ID}}" role="img" aria-label="{{.Title}} over the history"></canvas></figure>
{{- end}}
</div>
</main>
{{template "site-foot" .}}
{{- end}}
`))
