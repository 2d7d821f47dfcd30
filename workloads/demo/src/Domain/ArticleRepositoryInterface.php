<?php

declare(strict_types=1);

namespace Demo\Domain;

interface ArticleRepositoryInterface
{
    /**
     * @return list<Article>
     */
    public function all(): array;

    public function find(int $id): ?Article;

    /**
     * @return list<Article>
     */
    public function matching(ArticleCriteria $criteria): array;

    /**
     * @return array<string, int> tag => number of articles, most used first
     */
    public function tagCounts(): array;

    /**
     * @return list<Article>
     */
    public function related(Article $article, int $limit): array;

    /**
     * @return array{previous: ?Article, next: ?Article} neighbours in publication order
     */
    public function neighbours(Article $article): array;

    /**
     * @return list<Author>
     */
    public function authors(): array;

    /**
     * @return list<Comment> oldest first
     */
    public function comments(Article $article): array;
}
