<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var string $title
 * @var string $appName
 */
?><!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title><?= $this->e($title ?? $appName) ?> · <?= $this->e($appName) ?></title>
<?php if (isset($description)): ?>
<meta name="description" content="<?= $this->e($description) ?>">
<?php endif ?>
<style>
body{font:16px/1.55 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafaf8}
header.site,footer.site{background:#23313f;color:#eef;padding:.8rem 1.5rem}
header.site a,footer.site a{color:#cfe3ff;text-decoration:none;margin-right:1rem}
header.site a.active{border-bottom:2px solid #ffd166}
main{max-width:62rem;margin:0 auto;padding:1rem 1.5rem;display:grid;grid-template-columns:1fr 15rem;gap:2rem}
main>.wide{grid-column:1/-1}
article.card{border-bottom:1px solid #ddd;padding:.6rem 0}
.meta{color:#667;font-size:.85rem}
.tag{display:inline-block;background:#e6eef7;border-radius:3px;padding:0 .35rem;margin:0 .2rem .2rem 0;font-size:.8rem}
nav.pages a,nav.pages span{margin-right:.4rem}
.errors{background:#fde8e8;border:1px solid #e9a8a8;padding:.5rem 1rem}
pre{background:#eef;padding:.6rem;overflow:auto}
.avatar{display:inline-block;width:1.6rem;height:1.6rem;border-radius:50%;color:#fff;text-align:center;font-size:.7rem;line-height:1.6rem;margin-right:.3rem}
.comment{border-left:3px solid #e6eef7;padding-left:.8rem;margin:.8rem 0}
label{display:block;margin-top:.6rem}input,textarea{width:100%;max-width:30rem}
</style>
</head>
<body>
<?php $this->insert('partials/header', ['active' => $active ?? '']) ?>
<main>
<?php if ($this->hasSection('aside')): ?>
<div class="content">
<?= $this->section('content') ?>
</div>
<aside>
<?= $this->section('aside') ?>
</aside>
<?php else: ?>
<div class="content wide">
<?= $this->section('content') ?>
</div>
<?php endif ?>
</main>
<?php $this->insert('partials/footer') ?>
</body>
</html>
