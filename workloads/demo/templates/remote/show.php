<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var \Demo\Remote\RemoteStatus $status
 */
$this->layout('layout', ['active' => 'remote']);
?>
<!-- phptune-demo:remote -->
<h1>Upstream status</h1>
<p>Resource <code><?= $this->e($status->resource) ?></code> is <strong><?= $this->e($status->state) ?></strong>
(answered in <?= $this->e(number_format($status->latencyMs, 1)) ?> ms).</p>
<table>
<thead><tr><th>Component</th><th>State</th><th>Replication lag</th></tr></thead>
<tbody>
<?php foreach ($status->components as $component): ?>
<tr><td><?= $this->e($component['name']) ?></td><td><?= $this->e($component['state']) ?></td><td><?= $component['lag'] ?> ms</td></tr>
<?php endforeach ?>
</tbody>
</table>
