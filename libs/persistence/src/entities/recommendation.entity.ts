import { Column, Entity, Index } from 'typeorm';
import { ProjectItemColumns } from './project-item.entity';

/** A recommendation for the project, retrievable by its embedding (of `title` + `body`). */
@Entity({ name: 'recommendations' })
@Index('recommendations_project_external_id_key', ['projectId', 'externalId'], { unique: true })
export class RecommendationEntity extends ProjectItemColumns {
  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text' })
  body: string;
}
