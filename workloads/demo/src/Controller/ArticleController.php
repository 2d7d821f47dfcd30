<?php

declare(strict_types=1);

namespace Demo\Controller;

use Demo\Domain\ArticleCriteria;
use Demo\Domain\ArticleRepositoryInterface;
use Demo\Domain\ArticleSort;
use Demo\Http\NotFoundException;
use Demo\Http\Request;
use Demo\Http\Response;
use Demo\Presentation\ArticlePresenter;
use Demo\Support\Paginator;
use Demo\View\RendererInterface;

final class ArticleController extends AbstractController
{
    public const PER_PAGE = 10;

    public function __construct(
        RendererInterface $view,
        private readonly ArticleRepositoryInterface $articles,
        private readonly ArticlePresenter $presenter,
    ) {
        parent::__construct($view);
    }

    public function index(Request $request): Response
    {
        $tagCounts = $this->articles->tagCounts();
        $tag = $request->query('tag');
        if ($tag === '') {
            $tag = null;
        }
        $sort = ArticleSort::fromQuery($request->query('sort'));

        $matching = $this->articles->matching(new ArticleCriteria($tag, null, $sort));
        $paginator = new Paginator(count($matching), self::PER_PAGE, $request->queryInt('page', 1, 1, 1_000_000));

        $authorCounts = [];
        foreach ($this->articles->all() as $article) {
            $authorCounts[$article->author->id] = ($authorCounts[$article->author->id] ?? 0) + 1;
        }
        $authors = [];
        foreach ($this->articles->authors() as $author) {
            $authors[] = ['author' => $author, 'count' => $authorCounts[$author->id] ?? 0];
        }
        usort($authors, static fn (array $a, array $b): int => [$b['count'], $a['author']->name] <=> [$a['count'], $b['author']->name]);

        $response = $this->render('articles/list', [
            'title' => $tag === null ? 'Articles' : 'Articles tagged “' . $tag . '”',
            'summaries' => $this->presenter->summaries($paginator->slice($matching)),
            'paginator' => $paginator,
            'tag' => $tag,
            'knownTag' => $tag === null || isset($tagCounts[$tag]),
            'sort' => $sort,
            'sorts' => ArticleSort::cases(),
            'tagCounts' => $tagCounts,
            'authors' => $authors,
        ]);

        return $response->withHeader('Cache-Control', 'public, max-age=60');
    }

    public function show(Request $request): Response
    {
        $id = (int) $request->attribute('id', '0');
        $article = $this->articles->find($id) ?? throw new NotFoundException(sprintf('No article %d.', $id));
        $detail = $this->presenter->detail($article);

        $response = $this->render('articles/detail', [
            'title' => $article->title,
            'detail' => $detail,
            'article' => $article,
        ]);

        return $response->withHeader('Cache-Control', 'public, max-age=300');
    }
}
