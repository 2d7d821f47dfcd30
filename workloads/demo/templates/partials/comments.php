<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var list<\Demo\Presentation\CommentView> $comments
 */
?>
<section class="comments" id="comments">
<h2><?= $this->plural(count($comments), 'comment') ?></h2>
<?php foreach ($comments as $view): ?>
<?php $comment = $view->comment ?>
<div class="comment" id="comment-<?= $comment->id ?>">
<p class="meta"><span class="avatar" style="background:<?= $this->e($comment->avatarColour()) ?>"><?= $this->e($comment->initials()) ?></span>
<strong>@<?= $this->e($comment->handle) ?></strong>
<?php if ($view->replyToHandle !== null): ?>
replying to <a href="#comment-<?= $comment->inReplyTo ?>">@<?= $this->e($view->replyToHandle) ?></a>
<?php endif ?>
· <time datetime="<?= $this->date($comment->postedAt, DATE_ATOM) ?>"><?= $this->date($comment->postedAt, 'j M Y, H:i') ?></time></p>
<?= $view->html ?>
</div>
<?php endforeach ?>
</section>
