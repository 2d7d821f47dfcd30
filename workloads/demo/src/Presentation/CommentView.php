<?php

declare(strict_types=1);

namespace Demo\Presentation;

use Demo\Domain\Comment;

final readonly class CommentView
{
    public function __construct(
        public Comment $comment,
        public string $html,
        public ?string $replyToHandle,
    ) {
    }
}
