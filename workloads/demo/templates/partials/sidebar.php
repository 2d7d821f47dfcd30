<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var array<string, int> $tagCounts
 * @var list<array{author: \Demo\Domain\Author, count: int}> $authors
 * @var string|null $tag
 */
?>
<h3>Tags</h3>
<p>
<?php foreach ($tagCounts as $name => $count): ?>
<a class="tag" href="<?= $this->url('articles', [], ['tag' => $name]) ?>"<?= $name === $tag ? ' aria-current="true"' : '' ?>>#<?= $this->e($name) ?> <small>(<?= $count ?>)</small></a>
<?php endforeach ?>
</p>
<h3>Authors</h3>
<ul>
<?php foreach ($authors as $row): ?>
<li title="<?= $this->e($row['author']->bio) ?>"><?= $this->e($row['author']->initials()) ?> · <?= $this->e($row['author']->name) ?> (<?= $row['count'] ?>)</li>
<?php endforeach ?>
</ul>
